"""The verify phase's hierarchy: structure first, then the scenario's check, then the LLM judge
(skipped when the budget is under pressure). The generator never grades its own work."""

from __future__ import annotations

from pydantic import JsonValue
from temporalio.exceptions import ActivityError

from harness.core.errors import FailureContext
from harness.engine.budget import MINIMAL_AT, Degradation
from harness.engine.messages import JudgeCallRequest, ReportCheckRequest
from harness.engine.run import Verdict
from harness.engine.trace import AgentRole, TraceKind
from harness.engine.verification import structural_problems
from workflows.activity_calls import steps
from workflows.activity_calls.failures import ActivityFailure, raise_if_cancelled
from workflows.activity_calls.placement import SHORT_RETRY
from workflows.activity_calls.steps import PLAN_RETRY
from workflows.failure_causes import provider_failed
from workflows.run_context import RunContext


async def verify(ctx: RunContext, report: str | None) -> Verdict:
    state, ledger = ctx.state, ctx.ledger
    assert state.plan is not None and state.catalog is not None and ledger is not None
    problems = structural_problems(state.plan, state.catalog, ledger.statuses(), report)
    verdict = Verdict(passed=not problems, reasons=problems, checked_by=["structure"])
    if verdict.passed and report is not None:
        verdict = await _scenario_check(ctx, verdict, report, ledger.results)
    if verdict.passed and report is not None:
        verdict = await _judge(ctx, verdict, report, ledger.results)
    ctx.trace.emit(
        TraceKind.VERIFICATION_FINISH,
        role=AgentRole.CRITIC,
        status="passed" if verdict.passed else "failed",
        message="; ".join(verdict.reasons) or None,
        data={
            "checked_by": list(verdict.checked_by),
            "score": verdict.score,
            "judge_skipped": verdict.judge_skipped_reason,
        },
    )
    return verdict


async def _scenario_check(
    ctx: RunContext, verdict: Verdict, report: str, results: dict[str, JsonValue]
) -> Verdict:
    scenario = ctx.state.request.scenario
    request = ReportCheckRequest(
        scenario=scenario, goal=ctx.state.goal(), report=report, results=results
    )
    try:
        check = await steps.check_report(request)
    except ActivityError as error:
        raise_if_cancelled(error)
        failure = ActivityFailure(error, SHORT_RETRY.maximum_attempts or 1)
        reasons = [f"the scenario check could not run: {failure.message}"]
        return Verdict(passed=False, reasons=reasons, checked_by=verdict.checked_by)
    return Verdict(
        passed=check.passed,
        reasons=check.problems,
        checked_by=[*verdict.checked_by, check.check_name],
    )


async def _judge(
    ctx: RunContext, verdict: Verdict, report: str, results: dict[str, JsonValue]
) -> Verdict:
    """The LLM critic, unless the budget is under pressure (then deterministic checks only)."""
    budget, state = ctx.budget, ctx.state
    if ctx.degradation() in (Degradation.MINIMAL, Degradation.EXHAUSTED):
        reason = f"budget pressure {budget.pressure():.2f} >= {MINIMAL_AT}: judge skipped"
        return verdict.model_copy(update={"judge_skipped_reason": reason})
    request = JudgeCallRequest(
        run_id=state.run_id,
        scenario=state.request.scenario,
        goal=state.goal(),
        report=report,
        results=results,
        provider=state.request.provider,
        model=state.request.models.judge,
        cost_limited=budget.limits.max_cost_usd is not None,
    )
    try:
        judged = await steps.judge(request)
    except ActivityError as error:
        raise_if_cancelled(error)
        failure = ActivityFailure(error, PLAN_RETRY.maximum_attempts or 1)
        ctx.charge_failed(AgentRole.CRITIC, failure, "judging")
        reason = f"judge unavailable ({failure.type}): {failure.message}"
        if provider_failed(failure.code.value):
            ctx.judge_failure = FailureContext(code=failure.code.value, message=failure.message)
            return Verdict(passed=False, reasons=[reason], checked_by=verdict.checked_by)
        return verdict.model_copy(update={"judge_skipped_reason": reason})
    state.charge(AgentRole.CRITIC, judged.usage)
    budget.charge_tokens(judged.usage.total_tokens, judged.usage.cost_usd)
    return Verdict(
        passed=judged.passed,
        reasons=[] if judged.passed else judged.reasons,
        checked_by=[*verdict.checked_by, f"judge:{judged.model}"],
        score=judged.score,
    )
