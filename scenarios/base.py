"""What a scenario is: typed tools with their data, a report check and offline planning rules."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue

# What a tool is at run time belongs to the public package (a tool author imports it from
# there); the built-in scenarios and the activities import it from here as before.
from durable_harness.runtime import ProbeFunction as ProbeFunction
from durable_harness.runtime import Tool as Tool
from durable_harness.runtime import ToolContext as ToolContext
from durable_harness.runtime import ToolFunction as ToolFunction
from harness.catalog.tools import RESERVED_TOOL_PREFIX, ToolCatalog, reserved_name_reason
from harness.core.errors import FailureContext
from harness.core.plan import Plan
from harness.governance.gates import GateInput
from tool_servers.config import McpServer


class PlanningError(Exception):
    """The offline planner cannot make a plan from this goal; the message says what is missing."""


Environment = Mapping[str, str]

RESERVED_PREFIX = RESERVED_TOOL_PREFIX


def no_services(environment: Environment) -> dict[str, object]:
    return {}


def no_mcp_servers(environment: Environment) -> tuple[McpServer, ...]:
    return ()


@dataclass(frozen=True)
class PlanningInput:
    goal: str
    catalog: ToolCatalog
    attempt: int
    failures: list[FailureContext]
    previous_plan: Plan | None
    bound_to_task: bool = False
    work_notes: tuple[str, ...] = ()
    """What the run's task asks of it: the rules in force and the reviewers' comments."""
    carried_tools: tuple[str, ...] = ()
    """A repair run: the tools whose results the task already holds, carried forward from the
    submission sent back (a side effect among them is not to be done again)."""
    remembered_missing: tuple[str, ...] = ()
    """Entities that earlier runs of this scenario found no data for (episodic memory in the
    planner's context): a plan need not look them up again."""


@dataclass(frozen=True)
class CheckInput:
    goal: str
    report: str
    results: dict[str, JsonValue]


@dataclass(frozen=True)
class OutcomeInput:
    """What an eval's outcome check sees of a finished run."""

    run_id: str
    goal: str
    status: str
    report: str | None
    results: dict[str, JsonValue]
    """The results of the run's DONE nodes, by node id."""

    @property
    def succeeded(self) -> bool:
        return self.status == "SUCCEEDED"


OutcomeCheck = Callable[[OutcomeInput, Mapping[str, object]], Awaitable[list[str]]]
"""An eval's check of a finished run against the scenario's own truth (its data, or the external
system it acted on), with the worker's services: the problems it finds."""


@dataclass(frozen=True)
class Rubric:
    """What the critic judges a report by: criteria in words, and facts it should repeat."""

    criteria: list[str]
    evidence_terms: list[str] = field(default_factory=list)


def default_rubric(check: CheckInput) -> Rubric:
    return Rubric(criteria=["the report answers the goal using only facts from the tool results"])


@dataclass(frozen=True)
class CheckVerdict:
    passed: bool
    reason: str


AcceptanceFunction = Callable[[GateInput, Mapping[str, object]], Awaitable[CheckVerdict]]
"""Judges a task's submission (and the evidence it references), with the worker's services."""


@dataclass(frozen=True)
class AcceptanceCheck:
    """A completion gate in code, which a contract or a rule can require by its id."""

    id: str
    description: str
    judge: AcceptanceFunction


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    example_goal: str
    tools: tuple[Tool, ...]
    check: Callable[[CheckInput], list[str]]
    offline_plan: Callable[[PlanningInput], Plan]
    rubric: Callable[[CheckInput], Rubric] = default_rubric
    services: Callable[[Environment], dict[str, object]] = no_services
    """The services the scenario's tools use (ToolContext.services), built once per worker from
    its environment (e.g. where the payment service listens)."""

    acceptance_checks: tuple[AcceptanceCheck, ...] = ()
    """Completion gates a scope's contract or rules may require (ids unique across scenarios)."""

    shared_tools: tuple[Tool, ...] = ()
    """Tools every scenario has (the agent's management tools), given by the registry."""

    facts: tuple[str, ...] = ()
    """Background facts of the scenario's domain: semantic memory, retrieved by similarity."""

    outcome_check: OutcomeCheck | None = None
    """The eval's check of a finished run; none: a run that SUCCEEDED passes `check` again."""

    mcp_servers: Callable[[Environment], tuple[McpServer, ...]] = no_mcp_servers
    """MCP servers whose tools join the scenario's catalog, configured from the worker's
    environment (the repository the repo scenario's git server reads, say)."""

    def __post_init__(self) -> None:
        reserved = [t.spec.name for t in self.tools if reserved_name_reason(t.spec.name)]
        if reserved:
            raise ValueError(f"scenario {self.name}: tool names {reserved} are reserved")

    async def outcome_problems(
        self, outcome: OutcomeInput, services: Mapping[str, object]
    ) -> list[str]:
        """What the eval's outcome check finds wrong with a finished run."""
        if self.outcome_check is not None:
            return await self.outcome_check(outcome, services)
        if not outcome.succeeded:
            return []
        return self.check(CheckInput(outcome.goal, outcome.report or "", outcome.results))

    def catalog(self) -> ToolCatalog:
        """The scenario's tools, then the ones every catalog has."""
        return ToolCatalog(scenario=self.name, tools=[tool.spec for tool in self._all_tools()])

    def tool(self, name: str) -> Tool | None:
        return next((tool for tool in self._all_tools() if tool.spec.name == name), None)

    def _all_tools(self) -> tuple[Tool, ...]:
        return (*self.tools, *self.shared_tools)
