"""The run's flight recorder: trace events stamped with workflow time and the budget's state."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from harness.budget import Budget
    from harness.trace import TraceEvent, TraceKind


class TraceRecorder:
    def __init__(self, run_id: str, session_id: str | None, budget: Budget) -> None:
        self._run_id = run_id
        self._session_id = session_id
        self._budget = budget
        self._started = workflow.now()
        self.attempt = 0
        self.events: list[TraceEvent] = []

    def elapsed_seconds(self) -> float:
        return (workflow.now() - self._started).total_seconds()

    def emit(
        self,
        kind: TraceKind,
        *,
        role: str | None = None,
        node_id: str | None = None,
        tool: str | None = None,
        status: str | None = None,
        latency_ms: float | None = None,
        tokens: int | None = None,
        cost_usd: float | None = None,
        message: str | None = None,
        data: dict[str, JsonValue] | None = None,
    ) -> None:
        self._budget.set_elapsed(self.elapsed_seconds())
        self.events.append(
            TraceEvent(
                at=workflow.now(),
                run_id=self._run_id,
                session_id=self._session_id,
                kind=kind,
                attempt=self.attempt,
                role=role,
                node_id=node_id,
                tool=tool,
                status=status,
                latency_ms=latency_ms,
                tokens=tokens,
                cost_usd=cost_usd,
                message=message,
                pressure=round(self._budget.pressure(), 4),
                budget=self._budget.usage.model_copy(),
                data=data or {},
            )
        )
