"""An agent's conversation fitted into a context budget before each model turn.

The conversation is the turn request's (`harness.catalog.agent_turns`): the user's opening
message (the goal and the node's context), then turns: an assistant message (text, tool calls,
or both) and the results of the calls it asked for. A long loop outgrows any context window;
`fit_conversation` makes room by shortening the OLDEST tool results first, to a head and then
to nothing but a visible mark, and never touches the goal, any user message or the latest turn
(what the model answers now). A cut result keeps its place and call id, because both APIs pair
every call with its result (`conversation_problems`).

A cut is written into the result itself ("[cut: 1,234 characters of git_log's result]", the
characters left out), so the model sees it, and so a conversation fitted once (the one a loop
carries over continue-as-new) is fitted again by the same rule with the same counts.

Sizes are estimates (`harness.core.usage.estimate_tokens` of each message's JSON), as the
offline provider counts a turn's messages.
"""

from __future__ import annotations

import json
import re
from typing import Final

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.agent_turns import (
    AgentMessage,
    AssistantMessage,
    ToolResultMessage,
    UserMessage,
)
from harness.core.usage import estimate_tokens

SUMMARY_HEAD_CHARS: Final = 400
"""What a summarised tool result keeps of its text: enough for the model to recall what the
call returned, and small enough to free most of a large result."""

_MARK = re.compile(r"(?:^|\n)\[cut: ([0-9,]+) characters of [^\n]*'s result\]\Z")


def opening_message(goal: str, context: list[JsonValue] | None = None) -> UserMessage:
    """The user's opening message: the goal, then the context the node was given, if any."""
    text = goal
    if context:
        text += "\n\nContext:\n" + json.dumps(context, indent=2, ensure_ascii=False)
    return UserMessage(text=text)


def message_tokens(message: AgentMessage) -> int:
    return estimate_tokens(message.model_dump_json())


def conversation_tokens(messages: list[AgentMessage]) -> int:
    return sum(message_tokens(message) for message in messages)


def latest_turn_start(messages: list[AgentMessage]) -> int:
    """Where the latest turn starts: the last assistant message (the results of its calls
    follow it). Before any turn there is none, and nothing is old enough to cut."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AssistantMessage):
            return index
    return 0


def cuttable(messages: list[AgentMessage]) -> list[int]:
    """The tool results that may be shortened, oldest first: those with a result (a failed
    call's error is short, and what the model is to learn from) before the latest turn."""
    return [
        index
        for index in range(latest_turn_start(messages))
        if isinstance(message := messages[index], ToolResultMessage) and message.ok
    ]


class FittedConversation(BaseModel):
    messages: list[AgentMessage]
    tokens: int = Field(description="The fitted conversation's estimated size.")
    within_budget: bool = Field(
        description="False when even every old result cut to its mark leaves the conversation "
        "over the budget: the loop cannot take another turn in it."
    )
    cut_results: int = Field(description="Tool results this fit shortened.")


def cut_line(tool: str, cut_chars: int) -> str:
    """The visible mark of a cut, e.g. "[cut: 1,234 characters of git_log's result]"."""
    return f"[cut: {cut_chars:,} characters of {tool}'s result]"


def result_text(result: JsonValue) -> str:
    """A result as the model reads it: a string as it is, anything else as JSON."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _cut_state(message: ToolResultMessage) -> tuple[str, int]:
    """The head a result keeps and the characters already cut from it (0: not cut)."""
    text = result_text(message.result)
    mark = _MARK.search(text) if isinstance(message.result, str) else None
    if mark is None:
        return text, 0
    return text[: mark.start()], int(mark.group(1).replace(",", ""))


def summarised(message: ToolResultMessage) -> ToolResultMessage:
    """A result cut to its head and the mark (unchanged when that would not shorten it)."""
    head, cut = _cut_state(message)
    if cut or len(head) <= SUMMARY_HEAD_CHARS:
        return message
    kept = head[:SUMMARY_HEAD_CHARS]
    text = kept + "\n" + cut_line(message.tool, len(head) - SUMMARY_HEAD_CHARS)
    if len(text) >= len(head):
        return message
    return message.model_copy(update={"result": text})


def cut_to_mark(message: ToolResultMessage) -> ToolResultMessage:
    """A result cut to nothing but the mark (unchanged when that would not shorten it)."""
    head, cut = _cut_state(message)
    text = cut_line(message.tool, len(head) + cut)
    if len(text) >= len(result_text(message.result)):
        return message
    return message.model_copy(update={"result": text})


def fit_conversation(messages: list[AgentMessage], budget_tokens: int) -> FittedConversation:
    """`messages` within `budget_tokens` if cutting old tool results can make it so: first each
    old result, oldest first, is summarised to its head, then, if that is not enough, each is
    cut to its mark, oldest first again; the fit stops as soon as the conversation fits. A
    result no longer than its summary would be counts as summarised already."""
    fitted = list(messages)
    tokens = conversation_tokens(fitted)
    cut: set[int] = set()
    for shorten in (summarised, cut_to_mark):
        for index in cuttable(messages):
            if tokens <= budget_tokens:
                break
            message = fitted[index]
            if not isinstance(message, ToolResultMessage):  # never: cuttable lists results
                continue
            shorter = shorten(message)
            if shorter is message:
                continue
            tokens += message_tokens(shorter) - message_tokens(message)
            fitted[index] = shorter
            cut.add(index)
    return FittedConversation(
        messages=fitted,
        tokens=tokens,
        within_budget=tokens <= budget_tokens,
        cut_results=len(cut),
    )


SESSION_CHARS: Final = 60_000
"""The most of a session's conversation carried from slice to slice (as JSON): about 15,000
tokens, so a turn fits its context budget after its tool results are cut, and the checkpoint
stays far below a payload's 2 MB."""


def compact_session(
    messages: list[AgentMessage], max_chars: int = SESSION_CHARS
) -> list[AgentMessage]:
    """A session's conversation within `max_chars`: its oldest exchanges (a user's message and
    everything that answered it) cut whole, so every call keeps its result; the newest exchange
    is always kept. The first message kept says how many went (the session's memory keeps the
    answers they got)."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    sizes = [len(m.model_dump_json()) for m in messages]
    cut = 0
    for start in starts[1:]:
        if sum(sizes[cut:]) <= max_chars:
            break
        cut = start
    if cut == 0:
        return messages
    first = messages[cut]
    assert isinstance(first, UserMessage)
    note = f"({cut} earlier message(s) of this conversation were cut; its memory keeps the answers)"
    return [first.model_copy(update={"text": f"{note}\n\n{first.text}"}), *messages[cut + 1 :]]
