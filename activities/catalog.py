"""Activity: the tool catalog of a scenario, so what the planner saw lands in history."""

from __future__ import annotations

from temporalio import activity

from activities.provider_errors import as_temporal_failures
from harness.contracts import LIST_TOOLS_ACTIVITY
from harness.messages import CatalogRequest
from harness.tools import ToolCatalog
from scenarios import get_scenario


@activity.defn(name=LIST_TOOLS_ACTIVITY)
async def list_tools(request: CatalogRequest) -> ToolCatalog:
    with as_temporal_failures(activity.info().attempt):
        return get_scenario(request.scenario).catalog()
