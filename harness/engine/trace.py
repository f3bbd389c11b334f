"""Trace events: the flat, JSON-serialisable record of what a run did, in order."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field, JsonValue

from harness.engine.budget import Budget, BudgetUsage


class TraceKind(StrEnum):
    RUN_START = "run.start"
    PLANNING_FINISH = "planning.finish"
    VALIDATION_FINISH = "validation.finish"
    NODE_START = "node.start"
    NODE_FINISH = "node.finish"
    NODE_FAIL = "node.fail"
    NODE_SKIP = "node.skip"
    NODE_RETRY = "node.retry"
    NODE_PROBE = "node.probe"
    AGENT_TURN = "agent.turn"
    """A model turn of an agent node's loop (since agent nodes)."""
    AGENT_CALL = "agent.call"
    """A tool call an agent node's model asked for."""
    WAIT_CREATE = "wait.create"
    WAIT_DELIVER = "wait.deliver"
    WAIT_REJECT = "wait.reject"
    WAIT_EXPIRE = "wait.expire"
    RECOVERY_DECIDE = "recovery.decide"
    CONTRACT_LOAD = "contract.load"
    MEMORY_RETRIEVE = "memory.retrieve"
    MEMORY_RECORD = "memory.record"
    """Only when the run's episode was not saved (since 0.10), with why."""
    USAGE_CHARGE = "usage.charge"
    """What a failed model call cost, charged to the run (since 0.10): its tokens, its cost and
    whether they are estimated."""
    VERIFICATION_FINISH = "verification.finish"
    RUN_FINISH = "run.finish"


class AgentRole(StrEnum):
    """Who in the run did the work an event records: plans, tool calls, verdicts."""

    PLANNER = "planner"
    WORKER = "worker"
    CRITIC = "critic"
    AGENT = "agent"


class TraceEvent(BaseModel):
    at: datetime
    run_id: str
    session_id: str | None = None
    kind: TraceKind
    attempt: int
    role: str | None = Field(
        default=None,
        description="The agent role (planner, worker, critic, agent) behind the event.",
    )
    tool_role: str | None = Field(
        default=None, description="A node event's tool role (DATA, FINAL_SYNTHESIS)."
    )
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


def _when(event: TraceEvent) -> datetime:
    return event.at


class TraceLog:
    """The run's flight recorder: events stamped by the run's clock with the budget's state.

    `clock` is the run's notion of now (workflow time in a workflow), so the log is replay-safe
    and testable without a server. Emitting an event reads the budget; it never changes it."""

    def __init__(
        self,
        run_id: str,
        session_id: str | None,
        budget: Budget,
        clock: Callable[[], datetime],
    ) -> None:
        self._run_id = run_id
        self._session_id = session_id
        self._budget = budget
        self._clock = clock
        self.attempt = 0
        self.events: list[TraceEvent] = []
        """In time order: an event that happened earlier than one recorded lands before it."""
        self.recorded: list[TraceEvent] = []
        """The same events in the order they were recorded: a follower that has read the
        first N has read these N, whatever landed since (see harness.engine.progress_page)."""
        self.elapsed_at_last_event = 0.0

    def emit(
        self,
        kind: TraceKind,
        *,
        role: AgentRole | None = None,
        tool_role: str | None = None,
        node_id: str | None = None,
        tool: str | None = None,
        status: str | None = None,
        latency_ms: float | None = None,
        tokens: int | None = None,
        cost_usd: float | None = None,
        message: str | None = None,
        data: dict[str, JsonValue] | None = None,
        stamps_decisions: bool = True,
        at: datetime | None = None,
    ) -> None:
        """`stamps_decisions=False` for events older runs did not record (a refused signal):
        such runs decide with the time of their last event, which these must not move.

        `at` is when the event really happened, if not now (a retry reported when its call
        ends, by the activity's clock); the log stays in time order."""
        usage = self._budget.usage
        if stamps_decisions:
            self.elapsed_at_last_event = usage.seconds
        event = TraceEvent(
            at=at or self._clock(),
            run_id=self._run_id,
            session_id=self._session_id,
            kind=kind,
            attempt=self.attempt,
            role=role.value if role else None,
            tool_role=tool_role,
            node_id=node_id,
            tool=tool,
            status=status,
            latency_ms=latency_ms,
            tokens=tokens,
            cost_usd=cost_usd,
            message=message,
            pressure=round(self._budget.pressure(usage.seconds), 4),
            budget=usage,
            data=data or {},
        )
        # after every event at or before it: a binary search, as a batch's thousands of
        # outcomes land among events of their own past
        bisect.insort_right(self.events, event, key=_when)
        self.recorded.append(event)
