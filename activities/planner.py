"""Activity: ask the run's provider for a plan."""

from __future__ import annotations

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.heartbeats import with_heartbeats
from activities.llm import ProviderRegistry
from activities.llm.structured import ModelCannotPlanError
from activities.provider_errors import as_temporal_failures
from activities.spending import Spending, charged_attempts
from harness.core.errors import ErrorCode
from harness.engine.contracts import PLAN_ACTIVITY
from harness.engine.messages import PlanRequest, PlanResponse
from scenarios import get_scenario
from scenarios.base import PlanningError

log = structlog.get_logger()


class PlannerActivities:
    def __init__(self, providers: ProviderRegistry) -> None:
        self._providers = providers

    @activity.defn(name=PLAN_ACTIVITY)
    async def plan(self, request: PlanRequest) -> PlanResponse:
        attempt = activity.info().attempt
        logger = log.bind(
            run_id=request.run_id,
            plan_attempt=request.attempt,
            activity_attempt=attempt,
            role="planner",
        )
        spending = Spending()
        with charged_attempts(spending):
            try:
                with as_temporal_failures(attempt):
                    scenario = get_scenario(request.scenario)
                    provider = self._providers.get(request.provider)
                    planning = provider.plan(request, scenario)
                    response = await with_heartbeats(planning, spending.details)
            except PlanningError as error:
                logger.info("planning.cannot_plan", reason=str(error))
                code = (
                    ErrorCode.CANNOT_PLAN
                    if isinstance(error, ModelCannotPlanError)
                    else ErrorCode.MISSING_INFO
                )
                raise ApplicationError(
                    str(error), {"attempt": attempt}, type=code.value, non_retryable=True
                ) from error
        response.usage = spending.plus_earlier(response.usage)
        logger.info("planning.finish", nodes=len(response.plan.nodes), by=response.planned_by)
        return response
