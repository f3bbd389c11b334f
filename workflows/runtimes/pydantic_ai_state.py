"""The pydantic-ai runtime's checkpoint and usage, as plain models: what a slice exports and the
next one (on any worker) resumes from. Pure mappings, tested offline.

The conversation is pydantic-ai's own message history, as `ModelMessagesTypeAdapter` writes it
to JSON; beside it, the calls the agent deferred to the harness (its pack tools and its waits)
and the results they have so far, which the next run is given as `DeferredToolResults`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, JsonValue
from pydantic_ai import DeferredToolResults
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.usage import RunUsage

from harness.core.usage import TokenUsage
from harness.engine.agent_conversation import SESSION_CHARS
from harness.engine.sessions import RuntimeCheckpoint

PYDANTIC_AI_RUNTIME = "pydantic-ai"


class DeferredCall(BaseModel):
    """A call the agent deferred to the harness: a pack tool's, or a wait's."""

    call_id: str
    tool: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class CallResult(BaseModel):
    """What a deferred call came to: its result, or why there is none."""

    ok: bool
    result: JsonValue = None
    error: str | None = None


class PydanticAIState(BaseModel):
    """The runtime's checkpoint: the history, the prompt not sent yet, the deferred calls of the
    last run and their results so far, the approvals given, the wait the slice ended on."""

    messages: list[JsonValue] = Field(default_factory=list)
    prompt: str | None = None
    deferred: list[DeferredCall] = Field(default_factory=list)
    results: dict[str, CallResult] = Field(default_factory=dict)
    approved: list[str] = Field(default_factory=list)
    waiting: str | None = Field(default=None, description="The call the slice waits on.")
    turns: int = Field(default=0, ge=0, description="Model requests in all, for call ids.")

    def history(self) -> list[ModelMessage]:
        return ModelMessagesTypeAdapter.validate_python(self.messages)

    def with_history(self, messages: list[ModelMessage]) -> PydanticAIState:
        dumped: list[JsonValue] = ModelMessagesTypeAdapter.dump_python(messages, mode="json")
        return self.model_copy(update={"messages": dumped})

    def compacted(self, max_chars: int = SESSION_CHARS) -> PydanticAIState:
        """The history within `max_chars`, its oldest exchanges (from a user's prompt to the
        next) cut whole, so every tool call keeps its return; the newest is always kept."""
        sizes = [len(json.dumps(message)) for message in self.messages]
        starts = [i for i, message in enumerate(self.messages) if _prompted(message)]
        cut = 0
        for start in starts[1:]:
            if sum(sizes[cut:]) <= max_chars:
                break
            cut = start
        return self.model_copy(update={"messages": self.messages[cut:]}) if cut else self

    def unresolved(self) -> list[tuple[int, DeferredCall]]:
        """The deferred calls with no result yet, with their place in the batch."""
        return [(i, c) for i, c in enumerate(self.deferred) if c.call_id not in self.results]

    def deferred_results(self) -> DeferredToolResults | None:
        """The results the next run continues with (none: no call was deferred)."""
        if not self.deferred:
            return None
        calls: dict[str, Any] = {
            call_id: outcome.result if outcome.ok else ToolFailed(outcome.error or "failed")
            for call_id, outcome in self.results.items()
        }
        return DeferredToolResults(calls=calls)


def _prompted(message: JsonValue) -> bool:
    """A request that carries a user's prompt: where an exchange of the history starts."""
    if not isinstance(message, dict) or message.get("kind") != "request":
        return False
    parts = message.get("parts")
    return isinstance(parts, list) and any(
        isinstance(part, dict) and part.get("part_kind") == "user-prompt" for part in parts
    )


def state_of(checkpoint: RuntimeCheckpoint | None) -> PydanticAIState:
    if checkpoint is None:
        return PydanticAIState()
    return PydanticAIState.model_validate(checkpoint.state)


def checkpoint_of(state: PydanticAIState) -> RuntimeCheckpoint:
    return RuntimeCheckpoint(runtime=PYDANTIC_AI_RUNTIME, state=state.model_dump(mode="json"))


def token_usage(usage: RunUsage, messages: list[ModelMessage]) -> TokenUsage:
    """pydantic-ai's usage of a run as the harness counts it; its models are the responses'."""
    models = [m.model_name for m in messages if isinstance(m, ModelResponse) and m.model_name]
    return TokenUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        models=list(dict.fromkeys(models)),
    )
