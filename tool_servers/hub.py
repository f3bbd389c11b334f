"""The worker's MCP servers and its connections to them, as the catalog and the tool calls use
them."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from harness.errors import ErrorCode, ToolError
from harness.mcp_tools import McpServerListing
from harness.tools import McpTarget
from tool_servers.sessions import McpSessions
from tool_servers.sources import McpSources


class McpHub:
    def __init__(self, sources: McpSources, environment: Mapping[str, str]) -> None:
        self.sources = sources
        self._sessions = McpSessions(environment)

    @classmethod
    def from_environment(cls, environment: Mapping[str, str]) -> McpHub:
        return cls(McpSources.from_environment(environment), environment)

    async def listings(self, scenario: str) -> list[McpServerListing]:
        """What each of the scenario's servers offers now, in configuration order."""
        return [
            await self._sessions.list_tools(server)
            for server in self.sources.for_scenario(scenario)
        ]

    async def call(
        self, scenario: str, target: McpTarget, arguments: Mapping[str, JsonValue]
    ) -> JsonValue:
        server = self.sources.server(scenario, target.server)
        if server is None:
            raise ToolError(
                ErrorCode.CONFIG_INVALID,
                f"MCP server '{target.server}' is not configured on this worker for {scenario}",
            )
        return await self._sessions.call(server, target.tool, arguments)

    async def aclose(self) -> None:
        await self._sessions.aclose()
