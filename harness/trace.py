"""Trace events: the flat, JSON-serialisable record of what a run did, in order."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field, JsonValue

from harness.budget import BudgetUsage


class TraceKind(StrEnum):
    RUN_START = "run.start"
    PLANNING_FINISH = "planning.finish"
    VALIDATION_FINISH = "validation.finish"
    NODE_START = "node.start"
    NODE_FINISH = "node.finish"
    NODE_FAIL = "node.fail"
    NODE_SKIP = "node.skip"
    NODE_RETRY = "node.retry"
    WAIT_CREATE = "wait.create"
    WAIT_DELIVER = "wait.deliver"
    WAIT_REJECT = "wait.reject"
    WAIT_EXPIRE = "wait.expire"
    RECOVERY_DECIDE = "recovery.decide"
    VERIFICATION_FINISH = "verification.finish"
    RUN_FINISH = "run.finish"


class TraceEvent(BaseModel):
    at: datetime
    run_id: str
    session_id: str | None = None
    kind: TraceKind
    attempt: int
    role: str | None = None
    node_id: str | None = None
    tool: str | None = None
    status: str | None = None
    latency_ms: float | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    message: str | None = None
    pressure: float = 0.0
    budget: BudgetUsage | None = None
    data: dict[str, JsonValue] = Field(default_factory=dict)
