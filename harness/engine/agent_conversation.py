"""An agent's conversation, and how it is fitted into a context budget before each model turn.

The conversation opens with the user's message (the goal and the node's context), then takes
turns: an assistant message (text, tool calls, or both) and the results of the calls it asked
for. A long loop outgrows any context window; `fit_conversation` makes room by shortening the
OLDEST tool results first, to a head and then to nothing but a visible mark, and never touches
the goal or the latest turn (what the model is answering now). A result keeps its place and its
call id even when cut, because the providers pair every tool call with its result.

Sizes are estimates (`harness.core.usage.estimate_tokens`), as the offline provider counts.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, Field, JsonValue

from harness.core.usage import estimate_tokens

SUMMARY_HEAD_CHARS: Final = 400
"""What a summarised tool result keeps of its text: enough for the model to recall what the
call returned, and small enough to free most of a large result."""


class MessageRole(StrEnum):
    USER = "user"  # the goal and the node's context: the first message, never cut
    ASSISTANT = "assistant"  # one model turn: text, tool calls, or both
    TOOL = "tool"  # the result of one tool call the model asked for


class ToolRequest(BaseModel):
    """A tool call the model asked for in an assistant message."""

    call_id: str = Field(description="The provider's id, which the call's result answers.")
    tool: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class CutMark(BaseModel):
    """A tool result was shortened: how long it was, and whether a head of it is kept."""

    original_chars: int = Field(ge=0)
    head_kept: bool


class ConversationMessage(BaseModel):
    role: MessageRole
    text: str = ""
    tool_requests: list[ToolRequest] = Field(
        default_factory=list, description="An assistant message's calls."
    )
    call_id: str | None = Field(default=None, description="A tool result: the call it answers.")
    tool: str | None = Field(default=None, description="A tool result: the tool that made it.")
    cut: CutMark | None = Field(default=None, description="A tool result that was shortened.")

    @classmethod
    def user(cls, goal: str, context: list[JsonValue] | None = None) -> ConversationMessage:
        """The opening message: the goal, then the context the node was given, if any."""
        text = goal
        if context:
            text += "\n\nContext:\n" + json.dumps(context, indent=2, ensure_ascii=False)
        return cls(role=MessageRole.USER, text=text)

    @classmethod
    def assistant(
        cls, text: str = "", tool_requests: list[ToolRequest] | None = None
    ) -> ConversationMessage:
        return cls(role=MessageRole.ASSISTANT, text=text, tool_requests=tool_requests or [])

    @classmethod
    def tool_result(cls, call_id: str, tool: str, text: str) -> ConversationMessage:
        return cls(role=MessageRole.TOOL, call_id=call_id, tool=tool, text=text)

    def tokens(self) -> int:
        """The estimated size of this message as a provider would be sent it."""
        calls = [request.model_dump(mode="json") for request in self.tool_requests]
        return estimate_tokens(self.text) + (estimate_tokens(json.dumps(calls)) if calls else 0)


class Conversation(BaseModel):
    messages: list[ConversationMessage] = Field(min_length=1)

    def tokens(self) -> int:
        return sum(message.tokens() for message in self.messages)

    def latest_turn_start(self) -> int:
        """Where the latest turn starts: the last assistant message (the calls it asked for
        and their results follow it). Before any turn, only the opening message is there."""
        for index in range(len(self.messages) - 1, -1, -1):
            if self.messages[index].role is MessageRole.ASSISTANT:
                return index
        return len(self.messages)

    def cuttable(self) -> list[int]:
        """The tool results that may be shortened, oldest first: those before the latest turn."""
        return [
            index
            for index in range(self.latest_turn_start())
            if self.messages[index].role is MessageRole.TOOL
        ]


class FittedConversation(BaseModel):
    conversation: Conversation
    tokens: int = Field(description="The fitted conversation's estimated size.")
    within_budget: bool = Field(
        description="False when even every old result cut to its mark leaves the goal and the "
        "latest turn over the budget: the loop cannot take another turn in it."
    )
    cut_results: int = Field(description="Tool results shortened by this fit.")


def cut_line(message: ConversationMessage, original_chars: int) -> str:
    """The visible mark of a cut, e.g. "[cut: 1,234 characters of git_log's result]"."""
    return f"[cut: {original_chars:,} characters of {message.tool or 'a tool'}'s result]"


def summarised(message: ConversationMessage) -> ConversationMessage:
    """A tool result cut to its head and the mark (unchanged when that would not shorten it)."""
    if message.cut is not None:
        return message
    original = len(message.text)
    mark = cut_line(message, original - SUMMARY_HEAD_CHARS)
    text = message.text[:SUMMARY_HEAD_CHARS] + "\n" + mark
    if len(text) >= original:
        return message
    return message.model_copy(
        update={"text": text, "cut": CutMark(original_chars=original, head_kept=True)}
    )


def cut_to_mark(message: ConversationMessage) -> ConversationMessage:
    """A tool result cut to nothing but the mark (unchanged when that would not shorten it)."""
    if message.cut is not None and not message.cut.head_kept:
        return message
    original = message.cut.original_chars if message.cut is not None else len(message.text)
    text = cut_line(message, original)
    if len(text) >= len(message.text):
        return message
    return message.model_copy(
        update={"text": text, "cut": CutMark(original_chars=original, head_kept=False)}
    )


def fit_conversation(conversation: Conversation, budget_tokens: int) -> FittedConversation:
    """`conversation` within `budget_tokens` if cutting old tool results can make it so: first
    each old result, oldest first, is summarised to its head, then, if that is not enough, each
    is cut to its mark, oldest first again; a fit stops as soon as the conversation fits. A
    result no longer than its summary would be counts as summarised already."""
    messages = list(conversation.messages)
    tokens = conversation.tokens()
    cut: set[int] = set()
    for shorten in (summarised, cut_to_mark):
        for index in conversation.cuttable():
            if tokens <= budget_tokens:
                break
            shorter = shorten(messages[index])
            if shorter is messages[index]:
                continue
            tokens += shorter.tokens() - messages[index].tokens()
            messages[index] = shorter
            cut.add(index)
    return FittedConversation(
        conversation=Conversation(messages=messages),
        tokens=tokens,
        within_budget=tokens <= budget_tokens,
        cut_results=len(cut),
    )
