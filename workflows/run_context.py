"""Everything one run holds while it runs, in one place: the run's state, its budget and trace,
its wait desk, and the current attempt's node ledger and scheduler; and, once it has ended, its
result.

Phase handlers change it; the workflow's queries and the UI read it through the views here.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow

from harness.core.errors import FailureContext
from harness.engine.budget import Budget, Degradation
from harness.engine.node_ledger import NodeLedger
from harness.engine.progress_page import ProgressPage, page_after
from harness.engine.run import NodeOutcome, RunCounts, RunPhase, RunResult, RunStatus
from harness.engine.run_state import RunState
from harness.engine.trace import AgentRole, TraceKind, TraceLog
from workflows import search_attributes
from workflows.activity_calls.failures import ActivityFailure, charged_usage
from workflows.clock import RunClock
from workflows.details import current_details
from workflows.patches import ELAPSED_ON_DEMAND_PATCH
from workflows.run_memory import RunMemory
from workflows.scheduler import Scheduler
from workflows.task_binding import TaskReporter
from workflows.wait_desk import WaitDesk


@dataclass
class RunContext:
    clock: RunClock
    state: RunState
    budget: Budget
    trace: TraceLog
    desk: WaitDesk
    task: TaskReporter
    ledger: NodeLedger | None = None
    scheduler: Scheduler | None = None
    held_to_contract: bool = False
    """The run reads its scope's contract when it starts (every run, since 0.5)."""
    contract_read_local: bool = False
    """... in a local activity (since the patch that made it one)."""
    result_paths_checked: bool = False
    """Validation checks NODE_RESULT paths against result schemas (since the patch)."""
    given_plan_is_final: bool = False
    """A plan the request gives that fails validation ends the run at once (since the patch):
    it never goes to the planner, nor asks the user."""
    economy: bool = False
    """Under budget pressure (from 0.7) the planner and the writing tools use the fallback
    model (since the patch that brought it)."""
    group_cheap_calls: bool = False
    """Ready cheap calls share a local activity (since the patch that brought it)."""
    parallel_batches: bool = False
    """A wide plan's child batches run at once (since the patch that brought it)."""
    reserve_attempts: bool = False
    """Every tool call reserves its attempts from the tool-call budget, and each tool's own
    retry settings apply (since the patch that brought it)."""
    big_plans_apart: bool = False
    """A wide plan (more than `ScaleOptions.batch_plan_nodes`) is validated in a local activity
    and its child batches start one per workflow task (since the patch that brought it): the
    SDK's deadlock detector gives one activation 2 s, which a 20,000-node plan's took."""
    approval_covers: bool = False
    """An action decided in an earlier attempt is not asked again (since the patch that
    decides it at the start; runs before asked their own patch where a cover was found)."""
    known_outcomes: bool = False
    """An operation started again by a replan is settled from the outcome an earlier attempt
    was delivered (since the patch that brought it)."""
    judge_failure: FailureContext | None = None
    """The judge's model call failed for good (since FAILED_PROVIDER_PATCH): the run ends
    FAILED_PROVIDER instead of passing the report unjudged."""
    memory: RunMemory | None = None
    """What the run remembers and leaves (since 0.6, unless the run has no memory)."""
    ended: RunResult | None = None
    """The result the run ended with, built once by `end`: what the workflow returns, or fails
    with (workflows.outcome), and what the result query answers from then on, also when a
    history is replayed to read a Canceled run's result (durable_harness._client.run_results)."""

    def enter(self, phase: RunPhase) -> None:
        previous = self.state.phase
        if self.state.enter(phase):
            workflow.logger.info("phase %s -> %s", previous.value, phase.value)
            self.publish()

    def degradation(self) -> Degradation:
        """The budget's level for a decision: with the time now. Runs that began before time was
        read on demand decided with the time of their last trace event, and replay as they ran
        (without a time limit, both are the same)."""
        if self.budget.limits.max_seconds is None or workflow.patched(ELAPSED_ON_DEMAND_PATCH):
            return self.budget.degradation()
        return self.budget.degradation(self.trace.elapsed_at_last_event)

    def charge_failed(self, role: AgentRole, failure: ActivityFailure, what: str) -> None:
        """What a failed model call (`what`: planning, judging) cost, charged to the run."""
        usage = charged_usage(failure)
        if usage is None:
            return
        self.state.charge(role, usage)
        self.budget.charge_tokens(usage.total_tokens, usage.cost_usd)
        estimated = " (estimated)" if usage.estimated else ""
        self.trace.emit(
            TraceKind.USAGE_CHARGE,
            role=role,
            tokens=usage.total_tokens,
            cost_usd=usage.cost_usd,
            message=f"failed {what} cost {usage.total_tokens} tokens{estimated}",
            data={"estimated": usage.estimated},
        )

    def display_phase(self) -> RunPhase:
        """WAITING while anything waits on a person or a system, else the run's phase."""
        if not self.state.phase.is_terminal and self.desk.book.pending():
            return RunPhase.WAITING
        return self.state.phase

    def nodes(self) -> list[NodeOutcome]:
        return list(self.ledger.outcomes.values()) if self.ledger is not None else []

    def counts(self) -> RunCounts:
        if self.ledger is None:
            return RunCounts(replans=self.state.replans, tool_calls=self.budget.usage.tool_calls)
        return self.ledger.counts(replans=self.state.replans)

    def status(self) -> RunStatus:
        return self.state.status(
            phase=self.display_phase(),
            nodes=self.nodes(),
            counts=self.counts(),
            budget=self.budget.snapshot(),
            waits=list(self.desk.book.waits.values()),
        )

    def progress(self, after: int) -> ProgressPage:
        events, following = page_after(self.trace.recorded, after)
        return ProgressPage(
            events=events,
            next=following,
            phase=self.display_phase(),
            attempt=len(self.state.attempts),
            counts=self.counts(),
            pressure=round(self.budget.pressure(), 4),
            pending=self.desk.book.pending(),
        )

    def result(self) -> RunResult:
        """The result the run ended with; while it runs, its result as it stands."""
        return self.ended if self.ended is not None else self._result_now()

    def end(self) -> RunResult:
        """The run has ended: its result is built, held and handed to whoever ends the workflow
        with it. Built again, it would read the clock and the trace after the ending (a
        signal refused while a cancellation travels, say)."""
        if self.ended is None:
            self.ended = self._result_now()
        return self.ended

    def _result_now(self) -> RunResult:
        return self.state.result(
            finished_at=self.clock.now(),
            nodes=self.nodes(),
            counts=self.counts(),
            budget=self.budget.snapshot(),
            waits=list(self.desk.book.waits.values()),
            trace=self.trace.events,
        )

    def publish(self) -> None:
        """What the UI shows: search attributes to filter by and the current details."""
        pending = self.desk.book.pending()
        phase, pressure = self.display_phase(), self.budget.pressure()
        search_attributes.upsert(phase.value, pressure, pending_waits=len(pending))
        workflow.set_current_details(
            current_details(
                phase,
                run_id=self.state.run_id,
                attempt=len(self.state.attempts),
                counts=self.counts(),
                pending=pending,
                pressure=pressure,
                plan=self.state.plan,
                statuses=self.ledger.statuses() if self.ledger is not None else {},
            )
        )
