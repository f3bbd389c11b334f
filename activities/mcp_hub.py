"""The worker's MCP servers (each scenario's own, then the worker's from HARNESS_MCP_CONFIG) and
its connections to them, as the catalog and the tool calls use them. Workers of one task queue
are configured alike, as for every other setting: any of them may run any call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue

from harness.catalog.mcp_tools import McpServerListing, keep_tools
from harness.catalog.tools import McpTarget
from harness.core.errors import ErrorCode, ToolError
from scenarios import all_scenarios
from tool_servers.config import McpConfigError, McpServer, worker_servers
from tool_servers.sessions import McpSessions


@dataclass(frozen=True)
class McpSources:
    """Which servers serve which scenario: its own, then the worker's; and which of its own
    servers' tools a scenario keeps (its pack's `mcp_tools`; a scenario not named keeps all)."""

    worker: tuple[McpServer, ...] = ()
    scenarios: Mapping[str, tuple[McpServer, ...]] = field(default_factory=dict)
    kept: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for scenario, servers in self.scenarios.items():
            names = [server.name for server in (*servers, *self.worker)]
            twice = sorted({name for name in names if names.count(name) > 1})
            if twice:
                raise McpConfigError(
                    f"MCP server name(s) {', '.join(twice)} given twice for scenario {scenario}"
                )

    @classmethod
    def from_environment(cls, environment: Mapping[str, str]) -> McpSources:
        """The servers the environment configures; a `${NAME}` it does not set is an error now,
        at the worker's start, not in every run's catalog later."""
        sources = cls(
            worker=worker_servers(environment),
            scenarios={
                scenario.name: scenario.mcp_servers(environment) for scenario in all_scenarios()
            },
            kept={
                scenario.name: scenario.mcp_tools
                for scenario in all_scenarios()
                if scenario.mcp_tools is not None
            },
        )
        for server in sources.all_servers():
            server.resolved(environment)
        return sources

    def all_servers(self) -> list[McpServer]:
        return [*self.worker, *(s for servers in self.scenarios.values() for s in servers)]

    def for_scenario(self, scenario: str) -> tuple[McpServer, ...]:
        return (*self.scenarios.get(scenario, ()), *self.worker)

    def server(self, scenario: str, name: str) -> McpServer | None:
        return next((s for s in self.for_scenario(scenario) if s.name == name), None)

    def keep(self, scenario: str, listings: list[McpServerListing]) -> list[McpServerListing]:
        """The listings with the scenario's own servers' tools cut to those it keeps."""
        names = self.kept.get(scenario)
        if names is None:
            return listings
        own = {server.name for server in self.scenarios.get(scenario, ())}
        return keep_tools(listings, names, own, scenario)


class McpHub:
    """The servers and the worker's connections to them."""

    def __init__(self, sources: McpSources, environment: Mapping[str, str]) -> None:
        self.sources = sources
        self._sessions = McpSessions(environment)

    @classmethod
    def from_environment(cls, environment: Mapping[str, str]) -> McpHub:
        return cls(McpSources.from_environment(environment), environment)

    async def listings(self, scenario: str) -> list[McpServerListing]:
        """What each of the scenario's servers offers now, in configuration order, less the
        tools the scenario does not keep."""
        listed = await self._sessions.list_all(self.sources.for_scenario(scenario))
        return self.sources.keep(scenario, listed)

    async def call(
        self, scenario: str, target: McpTarget, arguments: Mapping[str, JsonValue]
    ) -> JsonValue:
        server = self.sources.server(scenario, target.server)
        if server is None:
            raise ToolError(
                ErrorCode.CONFIG_INVALID,
                f"MCP server '{target.server}' is not configured on this worker for {scenario}",
            )
        return await self._sessions.call(server, target.tool, arguments, writes=target.writes)

    async def aclose(self) -> None:
        await self._sessions.aclose()
