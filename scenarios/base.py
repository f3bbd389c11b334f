"""What a scenario is: typed tools with their data, a report check and offline planning rules."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, JsonValue

from harness.catalog.llm import TextReply, TextRequest, TextWriter
from harness.catalog.tools import RESERVED_TOOL_PREFIX, ToolCatalog, ToolSpec
from harness.core.errors import FailureContext
from harness.core.plan import Plan
from harness.core.usage import TokenUsage
from harness.engine.messages import OperationProbe
from harness.governance.gates import GateInput
from harness.governance.work import TaskBinding
from tool_servers.config import McpServer


class PlanningError(Exception):
    """The offline planner cannot make a plan from this goal; the message says what is missing."""


@dataclass
class ToolContext:
    """What a running tool may use besides its arguments. Usage of LLM calls is summed here."""

    run_id: str
    node_id: str
    attempt: int
    writer: TextWriter
    usage: TokenUsage = field(default_factory=TokenUsage)
    services: Mapping[str, object] = field(default_factory=dict)
    task: TaskBinding | None = None
    """The task the run works on (the management tools write to it)."""
    plan_attempt: int = 0
    economy: bool = False
    """Under budget pressure: what the tool writes, the provider's fallback model writes."""
    model: str | None = None
    """The run's worker model, when the run names one."""

    async def write(self, request: TextRequest) -> TextReply:
        if self.economy:
            request = request.model_copy(update={"economy": True})
        if self.model and not request.model:
            request = request.model_copy(update={"model": self.model})
        reply = await self.writer.write(request)
        self.usage = self.usage.plus(reply.usage)
        return reply


ToolFunction = Callable[[Any, ToolContext], Awaitable[JsonValue] | JsonValue]
"""A tool: `async def` for I/O; a plain function runs in a thread, off the worker's event loop."""

ProbeFunction = Callable[[str | None, ToolContext], Awaitable[OperationProbe]]
"""Asks the system a side-effecting tool acts on what became of the call of this run and node
(and of this operation id, when the run knows it)."""

Environment = Mapping[str, str]

RESERVED_PREFIX = RESERVED_TOOL_PREFIX


def no_services(environment: Environment) -> dict[str, object]:
    return {}


def no_mcp_servers(environment: Environment) -> tuple[McpServer, ...]:
    return ()


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    arguments: type[BaseModel]
    run: ToolFunction
    probe: ProbeFunction | None = None

    async def call(self, arguments: BaseModel, context: ToolContext) -> JsonValue:
        """Run the tool: an `async def` on the event loop; a plain function in a thread, so slow
        synchronous work never holds up the worker's other activities and workflows."""
        if inspect.iscoroutinefunction(self.run):
            result: JsonValue = await self.run(arguments, context)
            return result
        done = await asyncio.to_thread(self.run, arguments, context)
        return await done if inspect.isawaitable(done) else done


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
        reserved = [t.spec.name for t in self.tools if t.spec.name.startswith(RESERVED_PREFIX)]
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
