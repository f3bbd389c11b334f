"""Activity: the tool catalog of a scenario, with the tools of its MCP servers as they list them
now, so what the planner saw lands in history and a server that changes later cannot change a
running run's replay."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.mcp_hub import McpHub
from activities.provider_errors import as_temporal_failures
from harness.catalog.mcp_tools import ToolNameClashError, with_servers
from harness.catalog.tools import ToolCatalog
from harness.core.errors import ErrorCode, ToolError, is_retryable
from harness.engine.contracts import LIST_TOOLS_ACTIVITY
from harness.engine.messages import CatalogRequest
from scenarios import get_scenario


class CatalogActivities:
    def __init__(self, mcp: McpHub) -> None:
        self._mcp = mcp

    @activity.defn(name=LIST_TOOLS_ACTIVITY)
    async def list_tools(self, request: CatalogRequest) -> ToolCatalog:
        with as_temporal_failures(activity.info().attempt):
            catalog = get_scenario(request.scenario).catalog()
        try:
            listed = with_servers(catalog, await self._mcp.listings(request.scenario))
        except ToolError as error:
            raise ApplicationError(
                f"the catalog of {request.scenario}: {error.message}",
                type=error.code.value,
                non_retryable=not is_retryable(error.code),
            ) from error
        except ToolNameClashError as error:
            raise ApplicationError(
                f"the catalog of {request.scenario}: {error}",
                type=ErrorCode.CONFIG_INVALID.value,
                non_retryable=True,
            ) from error
        problems = listed.retry_problems()
        if problems:  # refused here, so a run never builds a retry policy from them
            raise ApplicationError(
                f"the catalog of {request.scenario}: {'; '.join(problems)}",
                type=ErrorCode.CONFIG_INVALID.value,
                non_retryable=True,
            )
        return listed
