"""AgentRunWorkflow: one run of plan -> validate -> execute -> verify -> (replan | finish).

The workflow is the run's message face (queries, signals, updates and their validators, which
hand their requests to `workflows.signal_intake`) and a loop over the transition table of
`workflows.phases`; what the run knows is one `RunState`,
and which moves are allowed is declared once in `harness.engine.run_state`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue

from harness.engine.agent_loop import AgentProgress, AgentWaitAsk, AllowanceAsk
from harness.engine.budget import Budget
from harness.engine.contracts import (
    AGENT_ALLOWANCE_ASK_SIGNAL,
    AGENT_PROGRESS_SIGNAL,
    AGENT_WAIT_ASK_SIGNAL,
    ANSWER_UPDATE,
    APPROVE_UPDATE,
    DELIVER_UPDATE,
    PROGRESS_QUERY,
    RESULT_QUERY,
    RUN_WORKFLOW,
    STATUS_QUERY,
    TASK_SCOPE_CLAIM_UPDATE,
    TRACE_QUERY,
    WAITS_QUERY,
)
from harness.engine.progress_page import ProgressPage
from harness.engine.run import RunPhase, RunRequest, RunResult, RunStatus, UnreadableRunRequestError
from harness.engine.run_state import RunState
from harness.engine.trace import TraceEvent, TraceKind, TraceLog
from harness.governance.task_commands import LedgerReceipt
from harness.governance.work import ScopeClaim, scope_claim_problem
from harness.waits.deliveries import AnswerRequest, ApprovalRequest, CancelRequest, DeliverRequest
from harness.waits.wait_book import DeliveryReceipt, Wait, WaitKind
from workflows.activity_calls.placement import llm_queue, local_failures_are_activity_errors
from workflows.clock import RunClock
from workflows.outcome import cancelled_through_temporal, end_as_outcome
from workflows.patches import (
    APPROVAL_COVERS_AT_START_PATCH,
    ATTEMPTS_RESERVED_PATCH,
    BIG_PLAN_PATCH,
    CANCEL_BEFORE_START_PATCH,
    CHEAP_GROUPS_PATCH,
    ECONOMY_PATCH,
    GIVEN_PLAN_FINAL_PATCH,
    KNOWN_OUTCOMES_PATCH,
    LOCAL_CONTRACT_READ_PATCH,
    LOCAL_MEMORY_PATCH,
    MEMORY_DEGRADES_PATCH,
    MEMORY_PATCH,
    OUTCOME_STATUS_PATCH,
    PARALLEL_BATCHES_PATCH,
    RESULT_PATHS_PATCH,
    SIGNAL_CANCEL_PATCH,
    SIGNED_ANSWERS_PATCH,
    WORK_CONTRACT_PATCH,
)
from workflows.phases import RunPhases
from workflows.run_context import RunContext
from workflows.run_memory import RunMemory
from workflows.signal_intake import Intake
from workflows.task_binding import TaskReporter
from workflows.wait_desk import WaitDesk


@workflow.defn(name=RUN_WORKFLOW, failure_exception_types=[UnreadableRunRequestError])
class AgentRunWorkflow:
    """A request that does not decode as a RunRequest (any client may start a run, e.g.
    `temporal workflow start`) fails the run, Failed with pydantic's reason, instead of failing
    its first workflow task forever (infra.converter names it). Any other error in workflow code
    fails the task, as Temporal does, so a fix can be deployed and the run goes on."""

    @workflow.init
    def __init__(self, request: RunRequest) -> None:
        run_id = workflow.info().workflow_id
        clock = RunClock()
        budget = Budget(request.limits, clock.elapsed_seconds)
        trace = TraceLog(run_id, request.session_id, budget, clock.now)
        state = RunState(run_id=run_id, request=request, started_at=clock.started)
        keyed = frozenset(request.actor_keys)
        desk = WaitDesk(trace, self._publish, keyed)
        reporter = TaskReporter(request.task, run_id)
        self._ctx = RunContext(clock, state, budget, trace, desk, reporter)
        self._phases = RunPhases(self._ctx)
        self._intake = Intake(self._ctx, self._cancel)
        self._main_task: asyncio.Task[Any] | None = None
        self._cancel_reason: str | None = None
        self._cancelling = False
        self._claimed_scope: str | None = None
        """The scope a run that works on no task creates its one task in (its first create)."""

    @workflow.run
    async def run(self, request: RunRequest) -> RunResult:
        ctx = self._ctx
        ctx.trace.emit(
            TraceKind.RUN_START,
            message=request.goal,
            data={"scenario": request.scenario, "max_replans": request.max_replans},
        )
        llm_queue()  # decided in the first task, never after a local activity (see llm_queue)
        ctx.desk.decide_rules()  # likewise
        truthful = workflow.patched(OUTCOME_STATUS_PATCH)  # likewise
        signal_cancel_ends_canceled = truthful and workflow.patched(SIGNAL_CANCEL_PATCH)  # likewise
        ctx.held_to_contract = workflow.patched(WORK_CONTRACT_PATCH)  # likewise
        ctx.contract_read_local = workflow.patched(LOCAL_CONTRACT_READ_PATCH)  # likewise
        ctx.economy = workflow.patched(ECONOMY_PATCH)  # likewise
        ctx.given_plan_is_final = workflow.patched(GIVEN_PLAN_FINAL_PATCH)  # likewise
        ctx.parallel_batches = workflow.patched(PARALLEL_BATCHES_PATCH)  # likewise
        ctx.group_cheap_calls = workflow.patched(CHEAP_GROUPS_PATCH)  # likewise
        ctx.reserve_attempts = workflow.patched(ATTEMPTS_RESERVED_PATCH)  # likewise
        ctx.big_plans_apart = workflow.patched(BIG_PLAN_PATCH)  # likewise
        ctx.approval_covers = workflow.patched(APPROVAL_COVERS_AT_START_PATCH)  # likewise
        ctx.known_outcomes = workflow.patched(KNOWN_OUTCOMES_PATCH)  # likewise
        ctx.result_paths_checked = workflow.patched(RESULT_PATHS_PATCH)  # likewise
        if request.actor_keys and workflow.patched(SIGNED_ANSWERS_PATCH):  # likewise
            self._intake.sign_answers()
        local_memory = workflow.patched(LOCAL_MEMORY_PATCH)  # likewise
        bounded_memory = workflow.patched(MEMORY_DEGRADES_PATCH)  # likewise
        local_failures_are_activity_errors()  # likewise; every local call reads it after
        if workflow.patched(MEMORY_PATCH) and request.memory.enabled:  # likewise
            ctx.memory = RunMemory(ctx.state, ctx.trace, local=local_memory, bounded=bounded_memory)
        if ctx.economy or ctx.memory is not None:
            ctx.degradation()  # its patch too: planning asks for it right after local activities
        self._intake.rules_decided()  # the signals that came before are taken now
        self._main_task = asyncio.current_task()  # after: an early cancel ends the run below
        try:
            if self._cancel_reason is not None and workflow.patched(CANCEL_BEFORE_START_PATCH):
                raise asyncio.CancelledError  # cancelled before the run's first step
            await ctx.task.bound()
            while not ctx.state.phase.is_terminal:
                ctx.enter(await self._phases.handlers[ctx.state.phase]())
        except asyncio.CancelledError:
            if self._being_evicted():
                raise  # the worker drops this copy of the run: nothing of the run's own ends
            reason = self._cancel_reason or workflow.cancellation_reason()
            await self._cancel_run(reason or "cancellation requested")
        work = ctx.state.work
        carried = [evidence.id for evidence in work.carried_evidence] if work else []
        await ctx.task.ended(ctx.state.phase.value, ctx.state.report, ctx.ledger, carried)
        ctx.trace.emit(TraceKind.RUN_FINISH, status=ctx.state.phase.value, message=ctx.state.error)
        if ctx.memory is not None:
            await ctx.memory.remember(ctx.result())
        await workflow.wait_condition(workflow.all_handlers_finished)
        result = ctx.end()
        if signal_cancel_ends_canceled and self._cancelled_by_signal_alone(result):
            await cancelled_through_temporal(self._cancel_reason or "", self._being_evicted)
        if truthful:
            end_as_outcome(result)
        return result

    @workflow.query(
        name=STATUS_QUERY, description="The live phase, node statuses, counts and budget."
    )
    def status(self) -> RunStatus:
        return self._ctx.status()

    @workflow.query(
        name=RESULT_QUERY, description="The RunResult as it stands; whole once the run ended."
    )
    def final_result(self) -> RunResult:
        """The RunResult as it stands (whole once the run has ended, whatever the ending)."""
        return self._ctx.result()

    @workflow.query(name=TRACE_QUERY, description="Every trace event the run has recorded.")
    def trace(self) -> list[TraceEvent]:
        return self._ctx.trace.events

    @workflow.query(
        name=PROGRESS_QUERY,
        description="Trace events recorded after the first AFTER, with phase, counts, pressure "
        "and the open waits: what `harness run` and the API's progress poll.",
    )
    def progress(self, after: int) -> ProgressPage:
        return self._ctx.progress(after)

    @workflow.query(
        name=WAITS_QUERY, description="Every wait of the run: pending, delivered or closed."
    )
    def waits(self) -> list[Wait]:
        return list(self._ctx.desk.book.waits.values())

    # -- deliveries: signals for external systems, updates for callers that need an answer ----

    @workflow.signal(
        dynamic=True,
        description="approve, answer, deliver or cancel: a JSON payload like the update's; "
        "what the run cannot use is refused in its trace (wait.reject).",
    )
    def on_signal(self, name: str, args: Sequence[RawValue]) -> None:
        """Every signal (approve, answer, deliver, cancel), read defensively: a payload the
        run cannot use is refused and traced, never a failed workflow task. One that comes
        before the run has decided its rules waits for them."""
        self._intake.signal(name, args)

    @workflow.signal(
        name=AGENT_ALLOWANCE_ASK_SIGNAL,
        description="Sent by an agent node's loop (its child workflow): it asks for more of "
        "the run's budget; the run answers it with what it can afford.",
    )
    async def agent_allowance_ask(self, ask: AllowanceAsk) -> None:
        scheduler = self._ctx.scheduler
        if scheduler is not None:
            await scheduler.agents.ask(ask)

    @workflow.signal(
        name=AGENT_PROGRESS_SIGNAL,
        description="Sent by an agent node's loop after each turn's calls: what it has spent "
        "and its new steps, charged to the run and traced under the node.",
    )
    def agent_progress(self, report: AgentProgress) -> None:
        scheduler = self._ctx.scheduler
        if scheduler is not None:
            scheduler.agents.progress(report)

    @workflow.signal(
        name=AGENT_WAIT_ASK_SIGNAL,
        description="Sent by an agent node's loop: its model called ask_user or "
        "request_approval; the run opens the wait and tells the loop how it ended.",
    )
    async def agent_wait_ask(self, ask: AgentWaitAsk) -> None:
        scheduler = self._ctx.scheduler
        if scheduler is not None:
            await scheduler.agents.wait(ask)

    def _cancel(self, request: CancelRequest) -> None:
        unsigned = self._intake.unsigned(request, None)
        if unsigned is not None:  # a keyed actor's name, without its signature
            self._ctx.desk.refuse(f"{request.actor}: {unsigned}", {"signal": "cancel"})
            return
        if self._ctx.state.phase.is_terminal or self._cancel_reason is not None:
            return
        if self._cancelling:
            return
        self._cancel_reason = f"{request.reason} (by {request.actor})"
        if self._main_task is not None:
            self._main_task.cancel()

    @workflow.update(
        name=TASK_SCOPE_CLAIM_UPDATE,
        description='A management tool in a run that works on no task: {"scope"}, where it '
        "is about to create its task; every create of the run must be in one scope.",
    )
    def claim_task_scope(self, claim: ScopeClaim) -> LedgerReceipt:
        # decided here, not only in the validator: two claims may pass their validators in
        # one workflow task before either handler runs
        problem = scope_claim_problem(self._ctx.task.binding, self._claimed_scope, claim.scope)
        if problem is not None:
            return LedgerReceipt(accepted=False, reason=problem)
        self._claimed_scope = claim.scope
        return LedgerReceipt(accepted=True, id=claim.scope, reason="scope claimed")

    @claim_task_scope.validator
    def _validate_claim(self, claim: ScopeClaim) -> None:
        if self._ctx.state.phase.is_terminal:
            raise ValueError(f"run {self._ctx.state.run_id} has finished")
        problem = scope_claim_problem(self._ctx.task.binding, self._claimed_scope, claim.scope)
        if problem is not None:
            raise ValueError(problem)

    @workflow.update(
        name=APPROVE_UPDATE,
        description='Approve or reject an APPROVAL wait: {"wait_id", "decision": "approve" '
        '| "reject", "actor": "human:NAME", "comment"}; answers with a receipt.',
    )
    def approve_sync(self, request: ApprovalRequest) -> DeliveryReceipt:
        return self._intake.approve(request)

    @approve_sync.validator
    def _validate_approve(self, request: ApprovalRequest) -> None:
        self._intake.refuse_when_finished(request, WaitKind.APPROVAL)

    @workflow.update(
        name=ANSWER_UPDATE,
        description='Answer a USER_INPUT wait: {"wait_id", "text", "actor"}; answers with a '
        "receipt.",
    )
    def answer_sync(self, request: AnswerRequest) -> DeliveryReceipt:
        return self._intake.answer(request)

    @answer_sync.validator
    def _validate_answer(self, request: AnswerRequest) -> None:
        self._intake.refuse_when_finished(request, WaitKind.USER_INPUT)

    @workflow.update(
        name=DELIVER_UPDATE,
        description='Deliver an async result, an event or a reconcile: {"wait_id" | '
        '"operation_id" | "event", "data", "actor"}; answers with a receipt.',
    )
    def deliver_sync(self, request: DeliverRequest) -> DeliveryReceipt:
        return self._intake.deliver(request)

    @deliver_sync.validator
    def _validate_deliver(self, request: DeliverRequest) -> None:
        self._intake.refuse_when_finished(request, self._intake.deliver_kind(request))

    # -- the run's own ending ------------------------------------------------------------------

    def _being_evicted(self) -> bool:
        """An eviction (a worker's cache dropping the run, or the local replay behind `harness
        trace` reaching the end of an open history) cancels the run's tasks too, but it is not a
        cancellation: no event, wait or phase may come of it. Its clock reads the epoch, before
        any run began, which no live or replayed task ever does."""
        return workflow.now() < self._ctx.state.started_at

    def _cancelled_by_signal_alone(self, result: RunResult) -> bool:
        """The `cancel` signal stopped the run and Temporal was not asked to cancel it."""
        return (
            result.status is RunPhase.CANCELLED
            and self._cancel_reason is not None
            and workflow.cancellation_reason() is None
        )

    def _publish(self) -> None:
        self._ctx.publish()

    async def _cancel_run(self, reason: str) -> None:
        """End the run CANCELLED: pending waits close, running nodes are cancelled (their
        activities see it through heartbeats), finished results are kept."""
        ctx = self._ctx
        self._cancelling = True
        ctx.desk.cancel_pending(f"run cancelled: {reason}")
        while ctx.scheduler is not None and ctx.ledger is not None:
            if ctx.ledger.is_finished():
                break
            try:
                await ctx.scheduler.stop(f"run cancelled: {reason}")
            except asyncio.CancelledError:
                continue  # a second cancel request while stopping changes nothing
        ctx.state.error = f"cancelled: {reason}"
        if ctx.state.attempts:
            ctx.state.attempt.outcome = RunPhase.CANCELLED
        ctx.enter(RunPhase.CANCELLED)
