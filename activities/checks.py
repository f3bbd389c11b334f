"""Activities: the scenario's own deterministic report check, and a wide plan's validation."""

from __future__ import annotations

from temporalio import activity

from activities.provider_errors import as_temporal_failures
from harness.engine.contracts import CHECK_REPORT_ACTIVITY, VALIDATE_PLAN_ACTIVITY
from harness.engine.messages import (
    PlanCheckRequest,
    PlanCheckResult,
    ReportCheckRequest,
    ReportCheckResult,
)
from harness.engine.validation import validate_plan as plan_issues
from scenarios import get_scenario
from scenarios.base import CheckInput


@activity.defn(name=CHECK_REPORT_ACTIVITY)
async def check_report(request: ReportCheckRequest) -> ReportCheckResult:
    with as_temporal_failures(activity.info().attempt):
        scenario = get_scenario(request.scenario)
    problems = scenario.report_problems(
        CheckInput(goal=request.goal, report=request.report, results=request.results)
    )
    return ReportCheckResult(
        passed=not problems, problems=problems, check_name=f"{scenario.name}.check"
    )


@activity.defn(name=VALIDATE_PLAN_ACTIVITY)
async def validate_plan(request: PlanCheckRequest) -> PlanCheckResult:
    """The workflow's own validation (pure), out of the workflow's sandbox and its 2 s deadlock
    detector: a 20,000-node plan took longer than that in it. Its verdict lands in history."""
    return PlanCheckResult(issues=plan_issues(request.plan, request.catalog, request.max_nodes))
