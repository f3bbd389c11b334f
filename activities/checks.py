"""Activity: the scenario's own deterministic report check."""

from __future__ import annotations

from temporalio import activity

from activities.provider_errors import as_temporal_failures
from harness.contracts import CHECK_REPORT_ACTIVITY
from harness.messages import ReportCheckRequest, ReportCheckResult
from scenarios import get_scenario
from scenarios.base import CheckInput


@activity.defn(name=CHECK_REPORT_ACTIVITY)
async def check_report(request: ReportCheckRequest) -> ReportCheckResult:
    with as_temporal_failures(activity.info().attempt):
        scenario = get_scenario(request.scenario)
    problems = scenario.check(
        CheckInput(goal=request.goal, report=request.report, results=request.results)
    )
    return ReportCheckResult(
        passed=not problems, problems=problems, check_name=f"{scenario.name}.check"
    )
