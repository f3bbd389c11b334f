"""One turn of an agent's tool-use loop, as any provider is asked it and answers it.

The agent is a model role of its own (`agent`): the provider answers with the model it serves
that role (or the run's own agent model, `model`). A request carries the conversation so far,
one model per message: the user's text, the assistant's text and tool calls, and each call's
result (ok, or failed with an error). The reply is either the tool calls the model asks for
(possibly several in one turn, to run in parallel) or its final answer, with its token usage.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, JsonValue, model_validator

from harness.catalog.tools import ToolSpec
from harness.core.usage import TokenUsage

DEFAULT_TURN_OUTPUT_TOKENS = 4096


class OfferedTool(BaseModel):
    """A tool the model may call this turn: its catalog name, description and argument schema."""

    name: str
    description: str
    arguments_schema: dict[str, Any] = Field(
        description="JSON schema of the tool's arguments (an object schema), as the catalog has it."
    )

    @classmethod
    def of(cls, spec: ToolSpec) -> OfferedTool:
        return cls(
            name=spec.name, description=spec.description, arguments_schema=spec.arguments_schema
        )


class ToolCall(BaseModel):
    """One call the model asks for. `id` is the provider's (or the offline loop's) and is how
    the call's result is matched to it."""

    id: str = Field(min_length=1)
    tool: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class UserMessage(BaseModel):
    kind: Literal["user"] = "user"
    text: str


class AssistantMessage(BaseModel):
    """What the model said in one turn: text, tool calls, or both."""

    kind: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolResultMessage(BaseModel):
    """The outcome of one tool call: its result when `ok`, else the error the model is told."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    tool: str
    ok: bool
    result: JsonValue = None
    error: str | None = None

    @model_validator(mode="after")
    def _error_only_when_failed(self) -> ToolResultMessage:
        if self.ok == (self.error is not None):
            raise ValueError("a tool result has an error exactly when it is not ok")
        return self


AgentMessage = Annotated[
    UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="kind")
]


class TurnStop(StrEnum):
    """Why the model stopped: it asks for tool calls, it answered, or it hit its token limit
    (the reply is then the text it had; any call it was writing is dropped, as incomplete)."""

    TOOL_USE = "tool_use"
    ANSWERED = "answered"
    MAX_TOKENS = "max_tokens"


class AgentTurnRequest(BaseModel):
    """One model turn of the agent of node `node_id` in run `run_id`."""

    run_id: str
    node_id: str
    turn: int = Field(ge=1, description="The turn's number in the loop, from 1.")
    system: str
    messages: list[AgentMessage]
    tools: list[OfferedTool]
    provider: str | None = None
    model: str | None = Field(default=None, description="The run's agent model, if it names one.")
    economy: bool = Field(
        default=False, description="Under budget pressure: the provider's fallback model answers."
    )
    max_output_tokens: int = Field(default=DEFAULT_TURN_OUTPUT_TOKENS, ge=1)
    cost_limited: bool = Field(
        default=False,
        exclude_if=lambda limited: not limited,
        description="The run has a cost limit: a model no price table lists is refused.",
    )

    def problems(self) -> list[str]:
        """What makes the conversation one no API accepts (none: fine)."""
        return conversation_problems(self.messages, self.tools)


def conversation_problems(messages: list[AgentMessage], tools: list[OfferedTool]) -> list[str]:
    """The rules both APIs hold a tool-use conversation to: it opens with the user; each result
    answers a call of the assistant turn just before, once; every call of a turn is answered
    before the next turn; it ends with the user or with results, for the model to answer."""
    problems: list[str] = []
    names = [tool.name for tool in tools]
    if len(set(names)) != len(names):
        problems.append("a tool is offered twice")
    if not messages or not isinstance(messages[0], UserMessage):
        problems.append("the conversation must open with a user message")
    open_calls: dict[str, str] = {}
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            if not message.text and not message.tool_calls:
                problems.append(f"message {index}: the assistant says nothing")
            if open_calls:
                problems.append(f"message {index}: calls {sorted(open_calls)} have no result")
            open_calls = {call.id: call.tool for call in message.tool_calls}
            if len(open_calls) != len(message.tool_calls):
                problems.append(f"message {index}: two calls share an id")
        elif isinstance(message, ToolResultMessage):
            if open_calls.pop(message.call_id, None) is None:
                problems.append(
                    f"message {index}: result for {message.call_id}, which the turn before "
                    "did not call or was already answered"
                )
        elif open_calls:
            problems.append(f"message {index}: calls {sorted(open_calls)} have no result")
            open_calls = {}
    if open_calls:
        problems.append(f"calls {sorted(open_calls)} have no result")
    if messages and isinstance(messages[-1], AssistantMessage):
        problems.append("the conversation ends with the assistant: nothing for it to answer")
    return problems


class AgentTurnReply(BaseModel):
    """The model's turn: the tool calls it asks for, or its final answer (never both)."""

    tool_calls: list[ToolCall] = Field(default_factory=list)
    answer: str | None = Field(default=None, description="The final answer, when no tool calls.")
    text: str = Field(default="", description="Text the model said alongside its tool calls.")
    stop: TurnStop
    model: str
    usage: TokenUsage

    @model_validator(mode="after")
    def _calls_or_answer(self) -> AgentTurnReply:
        if bool(self.tool_calls) == (self.answer is not None):
            raise ValueError("a turn asks for tool calls or answers, exactly one of them")
        if (self.stop is TurnStop.TOOL_USE) != bool(self.tool_calls):
            raise ValueError("a turn stops for tool use exactly when it asks for tool calls")
        return self

    def message(self) -> AssistantMessage:
        """The turn as the conversation's next message."""
        if self.answer is not None:
            return AssistantMessage(text=self.answer)
        return AssistantMessage(text=self.text, tool_calls=self.tool_calls)
