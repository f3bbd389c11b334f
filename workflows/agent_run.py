"""AgentRunWorkflow: one run of plan -> validate -> execute -> verify -> (replan | finish).

The `run` method is a loop over a transition table: each phase has one small handler that does
its work and returns the next phase.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, CancelledError

from workflows import search_attributes
from workflows.activity_options import (
    CATALOG_TIMEOUT,
    CHECK_TIMEOUT,
    PLAN_RETRY,
    PLAN_TIMEOUT,
    SHORT_RETRY,
    ActivityFailure,
)
from workflows.execution import PlanExecutor
from workflows.recorder import TraceRecorder
from workflows.waiting import WaitDesk

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from activities.catalog import list_tools
    from activities.checks import check_report
    from activities.judge import JudgeActivities
    from activities.planner import PlannerActivities
    from harness.budget import MINIMAL_AT, Budget, Degradation, degradation
    from harness.dag import NodeStatus
    from harness.errors import ErrorClass, FailureContext, classify, parse_error_code
    from harness.messages import (
        CatalogRequest,
        JudgeCallRequest,
        PlanRequest,
        PlanResponse,
        ReportCheckRequest,
        ToolCallResult,
    )
    from harness.plan import Plan
    from harness.recovery import RecoveryAction, RecoveryDecision, decide
    from harness.run import (
        AttemptRecord,
        NodeOutcome,
        RunCounts,
        RunPhase,
        RunRequest,
        RunResult,
        RunStatus,
        Verdict,
    )
    from harness.tools import ToolCatalog
    from harness.trace import TraceEvent, TraceKind
    from harness.usage import TokenUsage
    from harness.validation import validate_plan
    from harness.verification import structural_problems
    from harness.waits import (
        AnswerRequest,
        ApprovalRequest,
        CancelRequest,
        DeliverRequest,
        DeliveryReceipt,
        Wait,
        WaitKind,
        WaitStatus,
    )

WORKFLOW_NAME = "AgentRun"
VERIFICATION_FAILED = "VERIFICATION_FAILED"
PLAN_DETAILS_NODES = 20
MAX_QUESTIONS = 3
_SEVERITY = [ErrorClass.FATAL, ErrorClass.VALIDATION, ErrorClass.MISSING_INFO, ErrorClass.TRANSIENT]

Handler = Callable[[], Awaitable[RunPhase]]


@workflow.defn(name=WORKFLOW_NAME)
class AgentRunWorkflow:
    @workflow.init
    def __init__(self, request: RunRequest) -> None:
        self._request = request
        self._run_id = workflow.info().workflow_id
        self._phase = RunPhase.CREATED
        self._budget = Budget(request.limits)
        self._recorder = TraceRecorder(self._run_id, request.session_id, self._budget)
        self._started_at = workflow.now()
        self._catalog: ToolCatalog | None = None
        self._plan: Plan | None = None
        self._executor: PlanExecutor | None = None
        self._attempts: list[AttemptRecord] = []
        self._failures: list[FailureContext] = []
        self._replans = 0
        self._usage = TokenUsage()
        self._usage_by_role: dict[str, TokenUsage] = {}
        self._reusable: dict[str, ToolCallResult] = {}
        self._report: str | None = None
        self._verdict: Verdict | None = None
        self._error: str | None = None
        self._desk = WaitDesk(self._recorder, self._waits_changed)
        self._answers: list[str] = []
        self._main_task: asyncio.Task[Any] | None = None
        self._cancel_reason: str | None = None
        self._cancelling = False
        self._transitions: dict[RunPhase, Handler] = {
            RunPhase.CREATED: self._load_catalog,
            RunPhase.PLANNING: self._make_plan,
            RunPhase.VALIDATING: self._validate,
            RunPhase.EXECUTING: self._execute,
            RunPhase.VERIFYING: self._verify,
            RunPhase.REPLANNING: self._replan,
        }

    @workflow.run
    async def run(self, request: RunRequest) -> RunResult:
        self._recorder.emit(
            TraceKind.RUN_START,
            message=request.goal,
            data={"scenario": request.scenario, "max_replans": request.max_replans},
        )
        self._main_task = asyncio.current_task()
        try:
            while not self._phase.is_terminal:
                self._enter(await self._transitions[self._phase]())
        except asyncio.CancelledError:
            await self._cancel_run(self._cancel_reason or "cancellation requested")
        self._recorder.emit(TraceKind.RUN_FINISH, status=self._phase.value, message=self._error)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._result()

    @workflow.query(name="status")
    def status(self) -> RunStatus:
        return RunStatus(
            run_id=self._run_id,
            phase=self._display_phase(),
            attempt=self._recorder.attempt,
            plan=self._plan,
            nodes=self._node_outcomes(),
            counts=self._counts(),
            budget=self._budget.snapshot(),
            waits=list(self._desk.book.waits.values()),
        )

    @workflow.query(name="trace")
    def trace(self) -> list[TraceEvent]:
        return self._recorder.events

    @workflow.query(name="waits")
    def waits(self) -> list[Wait]:
        return list(self._desk.book.waits.values())

    # -- deliveries: signals for external systems, updates for callers that need an answer ----

    @workflow.signal(name="approve")
    def approve(self, request: ApprovalRequest) -> None:
        self._desk.deliver(request.delivery())

    @workflow.signal(name="answer")
    def answer(self, request: AnswerRequest) -> None:
        self._desk.deliver(request.delivery())

    @workflow.signal(name="deliver")
    def deliver(self, request: DeliverRequest) -> None:
        self._desk.deliver(request.delivery(self._desk.book))

    @workflow.signal(name="cancel")
    def cancel(self, request: CancelRequest) -> None:
        if self._phase.is_terminal or self._cancel_reason is not None or self._cancelling:
            return
        self._cancel_reason = f"{request.reason} (by {request.actor})"
        if self._main_task is not None:
            self._main_task.cancel()

    @workflow.update(name="approve_sync")
    def approve_sync(self, request: ApprovalRequest) -> DeliveryReceipt:
        return self._desk.deliver(request.delivery())

    @approve_sync.validator
    def _validate_approve(self, request: ApprovalRequest) -> None:
        self._refuse_when_finished()

    @workflow.update(name="answer_sync")
    def answer_sync(self, request: AnswerRequest) -> DeliveryReceipt:
        return self._desk.deliver(request.delivery())

    @answer_sync.validator
    def _validate_answer(self, request: AnswerRequest) -> None:
        self._refuse_when_finished()

    @workflow.update(name="deliver_sync")
    def deliver_sync(self, request: DeliverRequest) -> DeliveryReceipt:
        return self._desk.deliver(request.delivery(self._desk.book))

    @deliver_sync.validator
    def _validate_deliver(self, request: DeliverRequest) -> None:
        self._refuse_when_finished()

    def _refuse_when_finished(self) -> None:
        if self._phase.is_terminal:
            raise ValueError(f"run {self._run_id} has finished ({self._phase.value})")

    # -- transitions -------------------------------------------------------------------------

    async def _load_catalog(self) -> RunPhase:
        try:
            self._catalog = await workflow.execute_local_activity(
                list_tools,
                CatalogRequest(scenario=self._request.scenario),
                start_to_close_timeout=CATALOG_TIMEOUT,
                retry_policy=SHORT_RETRY,
                summary=f"catalog of {self._request.scenario}",
            )
        except ActivityError as error:
            _raise_if_cancelled(error)
            self._error = ActivityFailure(error, 1).message
            return RunPhase.FAILED_VALIDATION
        return RunPhase.PLANNING

    async def _make_plan(self) -> RunPhase:
        self._recorder.attempt += 1
        attempt = self._recorder.attempt
        record = AttemptRecord(attempt=attempt)
        self._attempts.append(record)
        if attempt == 1 and self._request.plan is not None:
            record.plan, record.planned_by = self._request.plan, "request"
        else:
            response = await self._ask_planner(attempt)
            if response is None:
                record.outcome = RunPhase.FAILED_VALIDATION
                failure_class = classify(parse_error_code(self._failures[0].code))
                if failure_class is not ErrorClass.MISSING_INFO:
                    return self._recover(RunPhase.FAILED_VALIDATION, failure_class)
                if self._request.ask_user and len(self._answers) < MAX_QUESTIONS:
                    return await self._ask_user(self._failures[0].message)
                return self._recover(
                    RunPhase.FAILED_VALIDATION,
                    failure_class,
                    halt_reason="the planner needs information the goal does not give",
                )
            record.plan, record.planned_by = response.plan, response.planned_by
        self._plan = record.plan
        self._recorder.emit(
            TraceKind.PLANNING_FINISH,
            role="planner",
            message=f"{len(record.plan.nodes)} nodes planned by {record.planned_by}",
            data={"nodes": len(record.plan.nodes), "planned_by": record.planned_by},
        )
        return RunPhase.VALIDATING

    async def _ask_user(self, question: str) -> RunPhase:
        """The goal lacks what the plan needs: ask, wait for the answer, then plan again."""
        wait = self._desk.open(
            f"question-{self._recorder.attempt}",
            WaitKind.USER_INPUT,
            question,
            self._request.wait_timeouts.user_input,
        )
        self._enter(RunPhase.WAITING)
        await self._desk.until_settled(wait)
        if wait.status is not WaitStatus.DELIVERED:
            self._error = f"no answer to: {question} ({wait.status.value})"
            return RunPhase.FAILED_VALIDATION
        self._answers.append(str(wait.payload))
        self._failures = []
        return RunPhase.PLANNING

    def _goal(self) -> str:
        """The goal with the user's answers to the questions asked along the way."""
        return "\n".join([self._request.goal, *(f"Answer: {a}" for a in self._answers)])

    async def _ask_planner(self, attempt: int) -> PlanResponse | None:
        assert self._catalog is not None
        try:
            response = await workflow.execute_activity_method(
                PlannerActivities.plan,
                PlanRequest(
                    run_id=self._run_id,
                    goal=self._goal(),
                    scenario=self._request.scenario,
                    attempt=attempt,
                    catalog=self._catalog,
                    failures=self._failures,
                    previous_plan=self._plan,
                    provider=self._request.provider,
                ),
                start_to_close_timeout=PLAN_TIMEOUT,
                retry_policy=PLAN_RETRY,
                summary=f"plan attempt {attempt}",
            )
        except ActivityError as error:
            _raise_if_cancelled(error)
            failure = ActivityFailure(error, PLAN_RETRY.maximum_attempts)
            self._error = f"planning failed: {failure.message}"
            self._failures = [FailureContext(code=failure.type, message=failure.message)]
            self._attempts[-1].failure = self._failures
            return None
        self._charge("planner", response.usage)
        return response

    async def _validate(self) -> RunPhase:
        assert self._plan is not None and self._catalog is not None
        issues = validate_plan(self._plan, self._catalog, self._request.max_nodes)
        record = self._attempts[-1]
        record.validation_issues = issues
        self._recorder.emit(
            TraceKind.VALIDATION_FINISH,
            status="valid" if not issues else "invalid",
            message="; ".join(issue.describe() for issue in issues) or None,
            data={"issues": len(issues)},
        )
        if not issues:
            return RunPhase.EXECUTING
        self._failures = [
            FailureContext(node_id=issue.node_id, code=issue.code.value, message=issue.message)
            for issue in issues
        ]
        record.failure = self._failures
        record.outcome = RunPhase.FAILED_VALIDATION
        self._error = f"the plan has {len(issues)} problem(s): " + "; ".join(
            issue.describe() for issue in issues
        )
        return self._recover(RunPhase.FAILED_VALIDATION, ErrorClass.VALIDATION)

    async def _execute(self) -> RunPhase:
        assert self._plan is not None and self._catalog is not None
        self._executor = PlanExecutor(
            run_id=self._run_id,
            scenario=self._request.scenario,
            plan=self._plan,
            catalog=self._catalog,
            max_concurrency=self._request.max_concurrency,
            budget=self._budget,
            recorder=self._recorder,
            reusable=self._reusable,
            faults=self._request.faults,
            provider=self._request.provider,
            desk=self._desk,
            approve_side_effects=self._request.approve_side_effects,
            timeouts=self._request.wait_timeouts,
            scale=self._request.scale,
        )
        await self._executor.run(self._seconds_left())
        executor = self._executor
        self._reusable.update(executor.reusable_next)
        self._charge("worker", executor.usage)
        record = self._attempts[-1]
        if executor.budget_skips:
            self._error = f"budget exhausted: {executor.budget_skips} node(s) not run"
            record.outcome = RunPhase.BUDGET_EXHAUSTED
            self._keep_partial_report()
            return RunPhase.BUDGET_EXHAUSTED
        if executor.failures:
            self._failures = executor.failures
            record.failure = executor.failures
            first = executor.failures[0]
            self._error = f"node '{first.node_id}' ({first.tool}) failed: {first.code}: "
            self._error += first.message
            record.outcome = RunPhase.FAILED_EXECUTION
            worst = _worst_class([classify(parse_error_code(f.code)) for f in executor.failures])
            return self._recover(RunPhase.FAILED_EXECUTION, worst)
        return RunPhase.VERIFYING

    async def _verify(self) -> RunPhase:
        assert self._plan is not None and self._catalog is not None and self._executor
        executor = self._executor
        final = self._final_node_id()
        report = executor.results.get(final) if final else None
        self._report = report if isinstance(report, str) else None
        problems = structural_problems(self._plan, self._catalog, executor.dag.status, self._report)
        verdict = Verdict(passed=not problems, reasons=problems, checked_by=["structure"])
        if verdict.passed and self._report is not None:
            verdict = await self._scenario_check(verdict, self._report, executor.results)
        if verdict.passed and self._report is not None:
            verdict = await self._judge(verdict, self._report, executor.results)
        self._verdict = verdict
        self._recorder.emit(
            TraceKind.VERIFICATION_FINISH,
            role="critic",
            status="passed" if verdict.passed else "failed",
            message="; ".join(verdict.reasons) or None,
            data={
                "checked_by": list(verdict.checked_by),
                "score": verdict.score,
                "judge_skipped": verdict.judge_skipped_reason,
            },
        )
        record = self._attempts[-1]
        if verdict.passed:
            record.outcome = RunPhase.SUCCEEDED
            return RunPhase.SUCCEEDED
        record.outcome = RunPhase.FAILED_VERIFICATION
        self._error = "verification failed: " + "; ".join(verdict.reasons)
        self._failures = [
            FailureContext(code=VERIFICATION_FAILED, message=reason) for reason in verdict.reasons
        ]
        record.failure = self._failures
        conserve = degradation(self._budget.pressure()) is not Degradation.FULL
        if conserve:
            return self._recover(RunPhase.FAILED_VERIFICATION, ErrorClass.FATAL)
        return self._recover(RunPhase.FAILED_VERIFICATION, ErrorClass.VALIDATION)

    async def _scenario_check(
        self, verdict: Verdict, report: str, results: dict[str, JsonValue]
    ) -> Verdict:
        try:
            check = await workflow.execute_local_activity(
                check_report,
                ReportCheckRequest(
                    scenario=self._request.scenario,
                    goal=self._goal(),
                    report=report,
                    results=results,
                ),
                start_to_close_timeout=CHECK_TIMEOUT,
                retry_policy=SHORT_RETRY,
                summary=f"check report ({self._request.scenario})",
            )
        except ActivityError as error:
            _raise_if_cancelled(error)
            failure = ActivityFailure(error, SHORT_RETRY.maximum_attempts or 1)
            reasons = [f"the scenario check could not run: {failure.message}"]
            return Verdict(passed=False, reasons=reasons, checked_by=verdict.checked_by)
        return Verdict(
            passed=check.passed,
            reasons=check.problems,
            checked_by=[*verdict.checked_by, check.check_name],
        )

    async def _judge(self, verdict: Verdict, report: str, results: dict[str, JsonValue]) -> Verdict:
        """The LLM critic, unless the budget is under pressure (then deterministic checks only)."""
        level = degradation(self._budget.pressure())
        if level in (Degradation.MINIMAL, Degradation.EXHAUSTED):
            reason = f"budget pressure {self._budget.pressure():.2f} >= {MINIMAL_AT}: judge skipped"
            return verdict.model_copy(update={"judge_skipped_reason": reason})
        try:
            judged = await workflow.execute_activity_method(
                JudgeActivities.judge,
                JudgeCallRequest(
                    run_id=self._run_id,
                    scenario=self._request.scenario,
                    goal=self._goal(),
                    report=report,
                    results=results,
                    provider=self._request.provider,
                ),
                start_to_close_timeout=PLAN_TIMEOUT,
                retry_policy=PLAN_RETRY,
                summary="judge the report",
            )
        except ActivityError as error:
            _raise_if_cancelled(error)
            failure = ActivityFailure(error, PLAN_RETRY.maximum_attempts or 1)
            reason = f"judge unavailable ({failure.type}): {failure.message}"
            return verdict.model_copy(update={"judge_skipped_reason": reason})
        self._charge("critic", judged.usage)
        return Verdict(
            passed=judged.passed,
            reasons=[] if judged.passed else judged.reasons,
            checked_by=[*verdict.checked_by, f"judge:{judged.model}"],
            score=judged.score,
        )

    async def _replan(self) -> RunPhase:
        self._replans += 1
        return RunPhase.PLANNING

    # -- helpers -----------------------------------------------------------------------------

    def _recover(
        self, failed: RunPhase, error_class: ErrorClass, *, halt_reason: str | None = None
    ) -> RunPhase:
        """Replan when the failure is one a new plan can fix and replans and budget allow."""
        decision = decide(
            error_class,
            replans_used=self._replans,
            max_replans=self._request.max_replans,
            budget_allows=degradation(self._budget.pressure()) is not Degradation.EXHAUSTED,
        )
        if decision.action is RecoveryAction.RETRY:
            halt_reason = "retries exhausted under Temporal's retry policy"
        if halt_reason is not None:
            decision = RecoveryDecision(
                error_class=error_class, action=RecoveryAction.HALT, reason=halt_reason
            )
        self._recorder.emit(
            TraceKind.RECOVERY_DECIDE,
            status=decision.action.value,
            message=f"{decision.reason}: {self._error}",
            data={
                "error_class": decision.error_class.value,
                "action": decision.action.value,
                "failed_phase": failed.value,
                "replans_used": self._replans,
                "max_replans": self._request.max_replans,
                "pressure": round(self._budget.pressure(), 4),
            },
        )
        if decision.action is RecoveryAction.REPLAN:
            return RunPhase.REPLANNING
        if degradation(self._budget.pressure()) is Degradation.EXHAUSTED:
            return RunPhase.BUDGET_EXHAUSTED
        return failed

    def _charge(self, role: str, usage: TokenUsage) -> None:
        """Count usage for its role; the node usage is already charged to the budget."""
        self._usage = self._usage.plus(usage)
        self._usage_by_role[role] = self._usage_by_role.get(role, TokenUsage()).plus(usage)
        if role != "worker":
            self._budget.charge_tokens(usage.total_tokens, usage.cost_usd)

    def _seconds_left(self) -> float | None:
        limit = self._request.limits.max_seconds
        return None if limit is None else limit - self._recorder.elapsed_seconds()

    def _keep_partial_report(self) -> None:
        final = self._final_node_id()
        if self._executor is not None and final is not None:
            report = self._executor.results.get(final)
            self._report = report if isinstance(report, str) else None

    def _enter(self, phase: RunPhase) -> None:
        changed = phase is not self._phase
        if changed:
            workflow.logger.info("phase %s -> %s", self._phase.value, phase.value)
        self._phase = phase
        if changed:
            self._waits_changed()

    async def _cancel_run(self, reason: str) -> None:
        """End the run CANCELLED: pending waits close, running nodes are cancelled (their
        activities see it through heartbeats), finished results are kept."""
        self._cancelling = True
        self._desk.cancel_pending(f"run cancelled: {reason}")
        while self._executor is not None and not self._executor.dag.is_finished():
            try:
                await self._executor.stop(f"run cancelled: {reason}")
            except asyncio.CancelledError:
                continue  # a second cancel request while stopping changes nothing
        self._error = f"cancelled: {reason}"
        if self._attempts:
            self._attempts[-1].outcome = RunPhase.CANCELLED
        self._enter(RunPhase.CANCELLED)

    def _display_phase(self) -> RunPhase:
        if not self._phase.is_terminal and self._desk.book.pending():
            return RunPhase.WAITING
        return self._phase

    def _waits_changed(self) -> None:
        pending = len(self._desk.book.pending())
        phase = self._display_phase()
        search_attributes.upsert(phase.value, self._budget.pressure(), pending_waits=pending)
        counts = self._counts()
        workflow.set_current_details(
            f"**{phase.value}** (attempt {self._recorder.attempt})\n\n"
            f"nodes: {counts.done} done, {counts.failed} failed, {counts.skipped} skipped "
            f"of {counts.nodes}; pending waits: {pending}; replans: {counts.replans}; "
            f"budget pressure: {self._budget.pressure():.2f}" + self._plan_details()
        )

    def _plan_details(self) -> str:
        """The plan as the UI's current details show it: the first nodes and their statuses."""
        if self._plan is None:
            return ""
        shown = self._plan.nodes[:PLAN_DETAILS_NODES]
        statuses = self._executor.dag.status if self._executor is not None else {}
        lines = [
            f"- `{node.id}` {node.tool} ({statuses.get(node.id, 'PLANNED')})" for node in shown
        ]
        more = len(self._plan.nodes) - len(shown)
        if more > 0:
            lines.append(f"- … and {more} more")
        return "\n\nplan:\n" + "\n".join(lines)

    def _final_node_id(self) -> str | None:
        assert self._plan is not None and self._catalog is not None
        for node in self._plan.nodes:
            spec = self._catalog.get(node.tool)
            if spec is not None and spec.role.value == "FINAL_SYNTHESIS":
                return node.id
        return None

    def _node_outcomes(self) -> list[NodeOutcome]:
        if self._executor is None:
            return []
        return [self._executor.outcomes[node_id] for node_id in self._executor.dag.status]

    def _counts(self) -> RunCounts:
        executor = self._executor
        if executor is None:
            return RunCounts(replans=self._replans, tool_calls=self._budget.usage.tool_calls)
        return RunCounts(
            nodes=len(executor.outcomes),
            done=executor.dag.count(NodeStatus.DONE),
            failed=executor.dag.count(NodeStatus.FAILED),
            skipped=executor.dag.count(NodeStatus.SKIPPED),
            tool_calls=self._budget.usage.tool_calls,
            replans=self._replans,
        )

    def _result(self) -> RunResult:
        finished_at = workflow.now()
        return RunResult(
            run_id=self._run_id,
            status=self._phase,
            goal=self._goal(),
            scenario=self._request.scenario,
            session_id=self._request.session_id,
            report=self._report,
            plan=self._plan,
            attempts=self._recorder.attempt,
            attempt_history=self._attempts,
            nodes=self._node_outcomes(),
            verdict=self._verdict,
            trace=self._recorder.events,
            counts=self._counts(),
            budget=self._budget.snapshot(),
            usage=self._usage,
            usage_by_role=self._usage_by_role,
            waits=list(self._desk.book.waits.values()),
            report_partial=self._phase is RunPhase.BUDGET_EXHAUSTED and self._report is not None,
            started_at=self._started_at,
            finished_at=finished_at,
            wall_seconds=(finished_at - self._started_at).total_seconds(),
            error=None if self._phase is RunPhase.SUCCEEDED else self._error,
        )


def _worst_class(classes: list[ErrorClass]) -> ErrorClass:
    """A run with several failures recovers as its most severe one demands (FATAL first)."""
    return min(classes, key=_SEVERITY.index)


def _raise_if_cancelled(error: ActivityError) -> None:
    """An activity the run cancelled surfaces as ActivityError; turn it back into the run's
    cancellation so it ends CANCELLED, not as a failed phase."""
    if isinstance(error.cause, CancelledError):
        raise asyncio.CancelledError from error
