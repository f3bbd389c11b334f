"""Activity: ask the run's provider for a plan."""

from __future__ import annotations

import structlog
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.llm import ProviderConfigError, ProviderError, ProviderRegistry
from activities.provider_errors import config_failure, provider_failure
from harness.errors import ErrorCode
from harness.messages import PlanRequest, PlanResponse
from scenarios import UnknownScenarioError, get_scenario
from scenarios.base import PlanningError

log = structlog.get_logger()


class PlannerActivities:
    def __init__(self, providers: ProviderRegistry) -> None:
        self._providers = providers

    @activity.defn(name="harness.plan")
    async def plan(self, request: PlanRequest) -> PlanResponse:
        attempt = activity.info().attempt
        logger = log.bind(run_id=request.run_id, attempt=attempt, role="planner")
        try:
            scenario = get_scenario(request.scenario)
            provider = self._providers.get(request.provider)
            response = await provider.plan(request, scenario)
        except UnknownScenarioError as error:
            raise ApplicationError(
                str(error), type="UNKNOWN_SCENARIO", non_retryable=True
            ) from error
        except ProviderConfigError as error:
            raise config_failure(error, attempt) from error
        except ProviderError as error:
            logger.warning("planning.provider_error", code=error.code.value, reason=error.message)
            raise provider_failure(error, attempt) from error
        except PlanningError as error:
            logger.info("planning.cannot_plan", reason=str(error))
            raise ApplicationError(
                str(error),
                {"attempt": attempt},
                type=ErrorCode.MISSING_INFO.value,
                non_retryable=True,
            ) from error
        logger.info("planning.finish", nodes=len(response.plan.nodes), by=response.planned_by)
        return response
