"""Activity: the scenario's own deterministic report check."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from harness.messages import ReportCheckRequest, ReportCheckResult
from scenarios import UnknownScenarioError, get_scenario
from scenarios.base import CheckInput


@activity.defn(name="harness.check_report")
async def check_report(request: ReportCheckRequest) -> ReportCheckResult:
    try:
        scenario = get_scenario(request.scenario)
    except UnknownScenarioError as error:
        raise ApplicationError(str(error), type="UNKNOWN_SCENARIO", non_retryable=True) from error
    problems = scenario.check(
        CheckInput(goal=request.goal, report=request.report, results=request.results)
    )
    return ReportCheckResult(
        passed=not problems, problems=problems, check_name=f"{scenario.name}.check"
    )
