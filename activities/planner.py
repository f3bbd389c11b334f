"""Activity: ask the configured provider for a plan."""

from __future__ import annotations

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.llm import LLMProvider
from harness.errors import ErrorCode
from harness.messages import PlanRequest, PlanResponse
from scenarios import UnknownScenarioError, get_scenario
from scenarios.base import PlanningError

log = structlog.get_logger()


class PlannerActivities:
    def __init__(self, provider: LLMProvider) -> None:
        self._provider = provider

    @activity.defn(name="harness.plan")
    async def plan(self, request: PlanRequest) -> PlanResponse:
        logger = log.bind(run_id=request.run_id, attempt=request.attempt, role="planner")
        try:
            scenario = get_scenario(request.scenario)
            response = await self._provider.plan(request, scenario)
        except UnknownScenarioError as error:
            raise ApplicationError(
                str(error), type="UNKNOWN_SCENARIO", non_retryable=True
            ) from error
        except PlanningError as error:
            logger.info("planning.cannot_plan", reason=str(error))
            raise ApplicationError(
                str(error), type=ErrorCode.MISSING_INFO.value, non_retryable=True
            ) from error
        logger.info("planning.finish", nodes=len(response.plan.nodes), by=response.planned_by)
        return response
