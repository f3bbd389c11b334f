"""What the memory store holds and what it is asked: one record per episode or fact, scoped.

A record's text and data pass through `harness.core.redaction` when the record is made, so nothing
that looks like a secret can be written, whichever store and whoever writes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from pydantic import (
    BaseModel,
    Field,
    JsonValue,
    ValidationInfo,
    field_validator,
    model_validator,
)

from harness.core.redaction import redact
from harness.recall.memory_context import Memory, MemoryTier

MAX_TEXT_CHARS = 2000
STORED: Final = {"stored": True}
"""The validation context of a record read back from a store: it was redacted when written,
so reading it does not redact again (at 10,000 records, that is most of a read's time)."""
DEFAULT_DEPTH = 8
SHALLOW_DEPTH = 3
MAX_DEPTH = 50
"""Memories retrieved per tier: fewer under budget pressure (from 0.7)."""


class MemoryRecord(BaseModel):
    """One memory as stored: an episode of a run, or a background fact, in one scope."""

    id: str = Field(min_length=1, max_length=1200)
    tier: MemoryTier
    scope: str = Field(min_length=1)
    text: str = Field(min_length=1)
    session_id: str | None = None
    scenario: str | None = None
    run_id: str | None = None
    missing: list[str] = Field(
        default_factory=list, description="Entities a run found no data for, e.g. Atlantis."
    )
    source: str | None = Field(default=None, description="Where a fact came from.")
    confidence: float | None = Field(default=None, ge=0, le=1)
    at: datetime
    data: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("text")
    @classmethod
    def _bounded_and_redacted(cls, text: str, info: ValidationInfo) -> str:
        if info.context == STORED:
            return text
        text = redact(text)
        return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 1] + "…"

    @model_validator(mode="after")
    def _no_secret_in_data(self, info: ValidationInfo) -> MemoryRecord:
        if info.context == STORED:
            return self
        self.data = {key: _redacted(value) for key, value in self.data.items()}
        self.missing = [redact(name) for name in self.missing]
        return self

    def memory(self, score: float, session_id: str | None) -> Memory:
        """The record as retrieved for one run: its score and whether it is of the run's session."""
        same = self.tier is MemoryTier.EPISODIC and session_id is not None
        return Memory(
            id=self.id,
            tier=self.tier,
            text=self.text,
            score=score,
            same_session=same and self.session_id == session_id,
            at=self.at.isoformat(),
            scenario=self.scenario,
            missing=self.missing,
        )


class MemoryFilter(BaseModel):
    """Which records a listing or a `forget` names; at least one field for a forget."""

    id: str | None = None
    scope: str | None = None
    session_id: str | None = None
    tier: MemoryTier | None = None

    def is_empty(self) -> bool:
        return self.id is None and self.scope is None and self.session_id is None


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    return value


class MemoryQuery(BaseModel):
    """What the planner's memory is retrieved for: the goal, in its scope and session."""

    run_id: str
    goal: str
    scenario: str
    scope: str
    session_id: str | None = None
    depth: int = Field(
        default=DEFAULT_DEPTH,
        ge=1,
        le=MAX_DEPTH,
        description="Memories per group: session episodes, similar episodes, facts.",
    )


class RetrievedMemories(BaseModel):
    """What retrieval found, ranked: the planner's context is assembled from it in the run."""

    memories: list[Memory] = Field(default_factory=list)
    ranker: str
    candidates: int = Field(default=0, description="Memories ranked, in the scope and tier.")
    latency_ms: float = 0.0


class MemoryWritten(BaseModel):
    id: str
    location: str
