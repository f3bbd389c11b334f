"""Which MCP servers a worker has: each scenario's own, then the worker's (HARNESS_MCP_CONFIG),
whose tools join every scenario's catalog. Workers of one task queue are configured alike, as
they are for every other setting: any of them may run any call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scenarios import all_scenarios
from tool_servers.config import McpConfigError, McpServer, worker_servers


@dataclass(frozen=True)
class McpSources:
    worker: tuple[McpServer, ...] = ()
    scenarios: Mapping[str, tuple[McpServer, ...]] = field(default_factory=dict)

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
        return cls(
            worker=worker_servers(environment),
            scenarios={
                scenario.name: scenario.mcp_servers(environment) for scenario in all_scenarios()
            },
        )

    def for_scenario(self, scenario: str) -> tuple[McpServer, ...]:
        return (*self.scenarios.get(scenario, ()), *self.worker)

    def server(self, scenario: str, name: str) -> McpServer | None:
        return next((s for s in self.for_scenario(scenario) if s.name == name), None)
