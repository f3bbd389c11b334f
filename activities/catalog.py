"""Activity: the tool catalog of a scenario, so what the planner saw lands in history."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from harness.messages import CatalogRequest
from harness.tools import ToolCatalog
from scenarios import UnknownScenarioError, get_scenario


@activity.defn(name="harness.list_tools")
async def list_tools(request: CatalogRequest) -> ToolCatalog:
    try:
        return get_scenario(request.scenario).catalog()
    except UnknownScenarioError as error:
        raise ApplicationError(str(error), type="UNKNOWN_SCENARIO", non_retryable=True) from error
