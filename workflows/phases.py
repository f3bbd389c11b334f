"""The run's phase handlers: each does its phase's work on the run context and returns the
phase the run enters next. Recovery after a failure is the pure table of `harness.engine.recovery`;
the handler only records its decision.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import JsonValue
from temporalio import workflow
from temporalio.exceptions import ActivityError

from harness.core.errors import ErrorClass, FailureContext, classify, parse_error_code, worst_class
from harness.engine.bounds import request_problems
from harness.engine.budget import Degradation
from harness.engine.messages import PlanCheckRequest, PlanRequest, PlanResponse, WorkContextRequest
from harness.engine.node_ledger import NodeLedger
from harness.engine.recovery import FailedPhase, FailureCause, decide
from harness.engine.run import ExecutionOptions, RunPhase
from harness.engine.trace import AgentRole, TraceKind
from harness.engine.validation import ValidationIssue, validate_plan
from harness.engine.verification import VERIFICATION_FAILED
from harness.governance.host_contract import ContractInForce, held_to
from harness.waits.wait_book import WaitKind, WaitStatus
from workflows.activity_calls import steps, stores
from workflows.activity_calls.failures import ActivityFailure, raise_if_cancelled
from workflows.activity_calls.placement import SHORT_RETRY
from workflows.activity_calls.steps import PLAN_RETRY
from workflows.failure_causes import execution_cause, planning_cause
from workflows.patches import REQUEST_BOUNDS_PATCH
from workflows.run_context import RunContext
from workflows.run_memory import run_scope
from workflows.scheduler import Scheduler
from workflows.verification import verify

Handler = Callable[[], Awaitable[RunPhase]]


class RunPhases:
    def __init__(self, ctx: RunContext) -> None:
        self._ctx = ctx
        self.handlers: dict[RunPhase, Handler] = {
            RunPhase.CREATED: self.load_catalog,
            RunPhase.PLANNING: self.plan,
            RunPhase.WAITING: self.ask_user,
            RunPhase.VALIDATING: self.validate,
            RunPhase.EXECUTING: self.execute,
            RunPhase.VERIFYING: self.verify,
            RunPhase.REPLANNING: self.replan,
        }

    async def load_catalog(self) -> RunPhase:
        state = self._ctx.state
        problems = request_problems(state.request)
        if problems and workflow.patched(REQUEST_BOUNDS_PATCH):  # a start from any client
            state.error = "the request is out of range: " + "; ".join(problems)
            return RunPhase.FAILED_VALIDATION
        try:
            state.catalog = await steps.load_catalog(state.request.scenario)
        except ActivityError as error:
            raise_if_cancelled(error)
            state.error = ActivityFailure(error, 1).message
            return RunPhase.FAILED_VALIDATION
        if self._ctx.held_to_contract:
            return await self._hold_to_contract()
        return RunPhase.PLANNING

    async def _hold_to_contract(self) -> RunPhase:
        """The contract of the run's scope, read once: its tools' rules tighten the catalog
        (no run option relaxes them), its rules and the review's comments go to the planner.
        A contract that cannot be read fails the run closed."""
        ctx = self._ctx
        state, request = ctx.state, ctx.state.request
        scope = run_scope(request)
        assert state.catalog is not None
        task_id = request.task.task_id if request.task else None
        try:
            work = await stores.load_work_context(
                WorkContextRequest(scope=scope, task_id=task_id), local=ctx.contract_read_local
            )
        except ActivityError as error:
            raise_if_cancelled(error)
            state.error = f"the contract of scope '{scope}' could not be read: " + (
                ActivityFailure(error, 1).message
            )
            return RunPhase.FAILED_VALIDATION
        state.work = work
        contract = work.contract
        state.catalog = held_to(state.catalog, contract, bound=request.task is not None)
        ctx.desk.book.humans_only = contract.humans_only()
        if not _worth_telling(request.task is not None or request.scope is not None, contract):
            return RunPhase.PLANNING  # the default scope's contract, which holds nothing more
        repair = f"; a repair of {work.repair_of}" if work.repair_of else ""
        ctx.trace.emit(
            TraceKind.CONTRACT_LOAD,
            message=f"held to the contract of scope {scope}: {len(contract.rules)} rule(s) in "
            f"force{repair}",
            data={
                "scope": scope,
                "preset": contract.preset,
                "rules": list[JsonValue]([rule.id for rule in contract.rules]),
                "approval_required_tools": list[JsonValue](contract.approval_required_tools),
                "repair_of": work.repair_of,
            },
        )
        return RunPhase.PLANNING

    async def plan(self) -> RunPhase:
        state, trace = self._ctx.state, self._ctx.trace
        record = state.begin_attempt()
        trace.attempt = record.attempt
        if record.attempt == 1 and state.request.plan is not None:
            state.planned(state.request.plan, "request")
        else:
            response = await self._ask_planner(record.attempt)
            if response is None:
                failure_class = classify(parse_error_code(state.failures[0].code))
                cause = planning_cause(state)
                if cause.provider_failed:
                    state.attempt.outcome = RunPhase.FAILED_PROVIDER
                return self.recover(FailedPhase.PLANNING, failure_class, cause)
            state.planned(response.plan, response.planned_by)
        assert state.plan is not None
        nodes, planned_by = len(state.plan.nodes), record.planned_by
        trace.emit(
            TraceKind.PLANNING_FINISH,
            role=AgentRole.PLANNER,
            message=f"{nodes} nodes planned by {planned_by}",
            data={"nodes": nodes, "planned_by": planned_by},
        )
        return RunPhase.VALIDATING

    async def _ask_planner(self, attempt: int) -> PlanResponse | None:
        state = self._ctx.state
        assert state.catalog is not None
        memory = self._ctx.memory
        context = await memory.context(self._ctx.degradation()) if memory is not None else None
        request = PlanRequest(
            run_id=state.run_id,
            goal=state.goal(),
            scenario=state.request.scenario,
            attempt=attempt,
            catalog=state.catalog,
            failures=state.failures,
            previous_plan=state.plan,
            provider=state.request.provider,
            task=self._ctx.task.binding,
            work_notes=state.work.notes() if state.work else [],
            carried_tools=state.work.carried_tools() if state.work else [],
            memory=context,
            economy=self._ctx.economy and self._ctx.degradation() is not Degradation.FULL,
            model=state.request.models.planner,
            cost_limited=self._ctx.budget.limits.max_cost_usd is not None,
        )
        try:
            response = await steps.make_plan(request)
        except ActivityError as error:
            raise_if_cancelled(error)
            failure = ActivityFailure(error, PLAN_RETRY.maximum_attempts)
            self._ctx.charge_failed(AgentRole.PLANNER, failure, "planning")
            failures = [FailureContext(code=failure.type, message=failure.message)]
            state.failed(
                RunPhase.FAILED_VALIDATION, f"planning failed: {failure.message}", failures
            )
            return None
        self._charge(AgentRole.PLANNER, response)
        return response

    async def ask_user(self) -> RunPhase:
        """The goal lacks what the plan needs: ask, wait for the answer, then plan again."""
        state, desk = self._ctx.state, self._ctx.desk
        question = state.failures[0].message
        wait = desk.open(
            f"question-{len(state.attempts)}",
            WaitKind.USER_INPUT,
            question,
            state.request.wait_timeouts.user_input,
        )
        await desk.until_settled(wait)
        if wait.status is not WaitStatus.DELIVERED:
            state.error = f"no answer to: {question} ({wait.status.value})"
            return RunPhase.FAILED_VALIDATION
        state.answered(str(wait.payload))
        return RunPhase.PLANNING

    async def validate(self) -> RunPhase:
        state, trace = self._ctx.state, self._ctx.trace
        assert state.plan is not None and state.catalog is not None
        if (
            self._ctx.big_plans_apart
            and len(state.plan.nodes) > state.request.scale.batch_plan_nodes
        ):
            checked = await self._validate_apart()
            if checked is None:
                return RunPhase.FAILED_VALIDATION
            issues = checked
        else:
            issues = validate_plan(
                state.plan,
                state.catalog,
                state.request.max_nodes,
                check_paths=self._ctx.result_paths_checked,
            )
        state.attempt.validation_issues = issues
        described = "; ".join(issue.describe() for issue in issues)
        trace.emit(
            TraceKind.VALIDATION_FINISH,
            status="valid" if not issues else "invalid",
            message=described or None,
            data={"issues": len(issues)},
        )
        if not issues:
            return RunPhase.EXECUTING
        failures = [
            FailureContext(node_id=issue.node_id, code=issue.code.value, message=issue.message)
            for issue in issues
        ]
        error = f"the plan has {len(issues)} problem(s): {described}"
        state.failed(RunPhase.FAILED_VALIDATION, error, failures)
        if self._ctx.given_plan_is_final and state.attempt.planned_by == "request":
            return RunPhase.FAILED_VALIDATION  # the caller's plan: no planner, no question
        return self.recover(FailedPhase.VALIDATING, ErrorClass.VALIDATION)

    async def _validate_apart(self) -> list[ValidationIssue] | None:
        """A wide plan's validation, in a local activity: the same pure rules, out of the
        workflow task (whose activation the SDK fails after 2 s); None when it could not run."""
        state = self._ctx.state
        assert state.plan is not None and state.catalog is not None
        request = PlanCheckRequest(
            plan=state.plan, catalog=state.catalog, max_nodes=state.request.max_nodes
        )
        try:
            return (await steps.validate_plan(request)).issues
        except ActivityError as error:
            raise_if_cancelled(error)
            failure = ActivityFailure(error, SHORT_RETRY.maximum_attempts or 1)
            state.failed(
                RunPhase.FAILED_VALIDATION, f"the plan could not be validated: {failure.message}"
            )
            return None

    async def execute(self) -> RunPhase:
        ctx = self._ctx
        state = ctx.state
        assert state.plan is not None and state.catalog is not None
        options = ExecutionOptions.of(
            state.run_id, state.request, len(state.attempts), ctx.task.binding
        )
        options.economy_under_pressure = ctx.economy
        options.parallel_batches = ctx.parallel_batches
        options.group_cheap_calls = ctx.group_cheap_calls
        options.reserve_attempts = ctx.reserve_attempts
        options.batches_start_in_turn = ctx.big_plans_apart
        options.approval_covers = ctx.approval_covers
        options.known_outcomes = ctx.known_outcomes
        ledger = NodeLedger(state.plan, state.catalog, ctx.budget, ctx.trace, ctx.clock.now)
        ctx.ledger = ledger
        ctx.scheduler = Scheduler(ledger, ctx.desk, ctx.budget, options, state.reusable)
        await ctx.scheduler.run(ctx.budget.seconds_left())
        await ctx.task.adopt_created(ledger)
        await ctx.task.finished_nodes(
            ledger, len(state.attempts), list(ctx.desk.book.waits.values())
        )
        state.reusable.update(ledger.fresh_results)
        state.charge(AgentRole.WORKER, ledger.usage)
        if ledger.agent_usage.total_tokens:  # only runs with agent nodes have this role
            state.charge(AgentRole.AGENT, ledger.agent_usage)
        if ledger.budget_skips:
            error = f"budget exhausted: {ledger.budget_skips} node(s) not run"
            state.failed(RunPhase.BUDGET_EXHAUSTED, error)
            state.report = self._final_report()
            return RunPhase.BUDGET_EXHAUSTED
        if ledger.failures:
            first = ledger.failures[0]
            error = f"node '{first.node_id}' ({first.tool}) failed: {first.code}: {first.message}"
            cause = execution_cause(ledger, first)
            outcome = (
                RunPhase.FAILED_PROVIDER if cause.provider_failed else RunPhase.FAILED_EXECUTION
            )
            state.failed(outcome, error, ledger.failures)
            worst = worst_class([failure.code for failure in ledger.failures])
            return self.recover(FailedPhase.EXECUTING, worst, cause)
        return RunPhase.VERIFYING

    async def verify(self) -> RunPhase:
        ctx = self._ctx
        ctx.state.report = self._final_report()
        verdict = await verify(ctx, ctx.state.report)
        ctx.state.verdict = verdict
        if verdict.passed:
            ctx.state.attempt.outcome = RunPhase.SUCCEEDED
            return RunPhase.SUCCEEDED
        if ctx.judge_failure is not None:  # the judge's model call failed for good
            error = f"the judge failed: {ctx.judge_failure.message}"
            ctx.state.failed(RunPhase.FAILED_PROVIDER, error, [ctx.judge_failure])
            judged = classify(parse_error_code(ctx.judge_failure.code))
            return self.recover(FailedPhase.VERIFYING, judged, FailureCause(provider_failed=True))
        failures = [FailureContext(code=VERIFICATION_FAILED, message=r) for r in verdict.reasons]
        error = "verification failed: " + "; ".join(verdict.reasons)
        ctx.state.failed(RunPhase.FAILED_VERIFICATION, error, failures)
        return self.recover(FailedPhase.VERIFYING, ErrorClass.VALIDATION)

    async def replan(self) -> RunPhase:
        self._ctx.state.replans += 1
        return RunPhase.PLANNING

    def recover(
        self, failed: FailedPhase, error_class: ErrorClass, cause: FailureCause | None = None
    ) -> RunPhase:
        """Decide with the recovery table, record the decision, follow it."""
        ctx = self._ctx
        state = ctx.state
        facts = state.recovery_input(error_class, failed, ctx.degradation(), cause)
        decision = decide(facts)
        ctx.trace.emit(
            TraceKind.RECOVERY_DECIDE,
            status=decision.action.value,
            message=f"{decision.reason}: {state.error}",
            data={
                "error_class": decision.error_class.value,
                "action": decision.action.value,
                "failed_phase": failed.value,
                "next_phase": decision.next_phase.value,
                "replans_used": facts.replans_used,
                "max_replans": facts.max_replans,
                "degradation": facts.degradation.value,
                "pressure": round(ctx.budget.pressure(), 4),
            },
        )
        return decision.next_phase

    def _final_report(self) -> str | None:
        state, ledger = self._ctx.state, self._ctx.ledger
        assert state.plan is not None and state.catalog is not None
        final = state.catalog.final_synthesis_node(state.plan)
        report = ledger.results.get(final.id) if final and ledger else None
        return report if isinstance(report, str) else None

    def _charge(self, role: AgentRole, response: PlanResponse) -> None:
        self._ctx.state.charge(role, response.usage)
        self._ctx.budget.charge_tokens(response.usage.total_tokens, response.usage.cost_usd)


def _worth_telling(named: bool, contract: ContractInForce) -> bool:
    """A run in a scope it was given, or held to more than the default contract."""
    return named or bool(
        contract.rules or contract.approval_required_tools or contract.task_required_tools
    )
