"""`Pack`: a named set of tools with what a run of them needs (guidance for the planner, a check
of the final report, the worker's services, an offline planner...). The built-in scenarios are
packs; a user's package exposes one the same way.

    from durable_harness import Pack

    WEATHER = Pack("weather", "Wind readings at weather stations.", [wind_speed, wind_report])

A pack that cannot be used (a bad name, a reserved tool name, two tools with one name) raises
`PackDefinitionError` where it is written, in one line naming the pack and what to change.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from durable_harness.pack_types import (
    AcceptanceCheck,
    CheckInput,
    Environment,
    OfflinePlanner,
    OutcomeCheck,
    OutcomeInput,
    PlanningError,
    PlanningInput,
    ReportCheck,
    Rubric,
    default_rubric,
)
from durable_harness.runtime import Tool
from durable_harness.tools import FunctionTool
from harness.catalog.tools import ToolCatalog, reserved_name_reason
from harness.core.plan import Plan

if TYPE_CHECKING:  # the type only: importing the public package loads no MCP configuration
    from tool_servers.config import McpServer

__all__ = ["Pack", "PackDefinitionError"]

PACK_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")
"""A pack's name: it names the pack on the command line, in search attributes and in history."""


class PackDefinitionError(ValueError):
    """A pack that cannot be used; its message is one line naming the pack and what to change."""


def no_services(environment: Environment) -> dict[str, object]:
    return {}


def no_mcp_servers(environment: Environment) -> tuple[McpServer, ...]:
    return ()


RubricFunction: TypeAlias = Callable[[CheckInput], Rubric]
ServicesFunction: TypeAlias = Callable[[Environment], dict[str, object]]
McpServersFunction: TypeAlias = "Callable[[Environment], tuple[McpServer, ...]]"


@dataclass(frozen=True, init=False)
class Pack:
    """Only `name`, `description` and `tools` are required.

    - `tools`: `@tool` functions, or `Tool` objects (for completion modes, outcome probes...).
    - `instructions`: guidance for the planner.
    - `check`: a deterministic check of the final report (goal, report, node results): the
      problems it finds, none when the report passes.
    - `offline_plan`: the offline provider's planner; without one, a run of the pack needs a
      plan file or an LLM planner.
    - `services`, `mcp_servers`: built from the worker's environment, once per worker;
      `mcp_tools`: the only tools of those servers to keep (all when left out).
    - `eval_cases`: the pack's eval case file, which `harness eval NAME` runs (ship it as
      package data, e.g. `Path(__file__).parent / "eval_cases.yaml"`).
    - `rubric`, `facts`, `acceptance_checks`, `outcome_check`, `example_goal`: as the built-in
      scenarios use them.
    """

    name: str
    description: str
    tools: tuple[Tool, ...]
    instructions: str | None = None
    check: ReportCheck | None = None
    offline_plan: OfflinePlanner | None = None
    example_goal: str = ""
    rubric: RubricFunction = default_rubric
    """What the critic judges a report by."""
    services: ServicesFunction = no_services
    """The services the pack's tools use
    (ToolContext.services), built once per worker from its environment (e.g. where the payment
    service listens)."""
    acceptance_checks: tuple[AcceptanceCheck, ...] = ()
    """Completion gates a scope's contract or rules may require (ids unique across packs)."""
    shared_tools: tuple[Tool, ...] = ()
    """Tools every pack has (the final `write_report` and the agent's management tools), given
    by the registry."""
    facts: tuple[str, ...] = ()
    """Background facts of the pack's domain: semantic memory, retrieved by similarity."""
    outcome_check: OutcomeCheck | None = None
    """The eval's check of a finished run; none: a run that SUCCEEDED passes `check` again."""
    mcp_servers: McpServersFunction = no_mcp_servers
    """MCP servers whose tools join the pack's
    catalog, configured from the worker's environment."""
    mcp_tools: tuple[str, ...] | None = None
    """Only these of its MCP servers' tools join the catalog, by the names the servers list them
    under; none: all of them. A name none of its servers lists fails the catalog."""
    eval_cases: Path | None = None
    """The pack's eval case file (`harness eval NAME` runs it); none: the pack has no cases."""
    _by_name: Mapping[str, Tool] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        name: str,
        description: str,
        tools: Iterable[Tool | FunctionTool[..., Any]],
        *,
        instructions: str | None = None,
        check: ReportCheck | None = None,
        offline_plan: OfflinePlanner | None = None,
        example_goal: str = "",
        rubric: RubricFunction = default_rubric,
        services: ServicesFunction = no_services,
        acceptance_checks: Iterable[AcceptanceCheck] = (),
        shared_tools: Iterable[Tool] = (),
        facts: Iterable[str] = (),
        outcome_check: OutcomeCheck | None = None,
        mcp_servers: McpServersFunction = no_mcp_servers,
        mcp_tools: Iterable[str] | None = None,
        eval_cases: str | os.PathLike[str] | None = None,
    ) -> None:
        _refuse_bad_name(name)
        given = [(_as_tool(name, each), _origin(each)) for each in tools]
        own = tuple(tool for tool, _ in given)
        shared = tuple(shared_tools)
        _refuse_reserved(name, own)
        kept = None if mcp_tools is None else _kept_mcp_tools(name, mcp_tools)
        values: dict[str, object] = {
            "name": name,
            "description": description,
            "tools": own,
            "instructions": instructions,
            "check": check,
            "offline_plan": offline_plan,
            "example_goal": example_goal,
            "rubric": rubric,
            "services": services,
            "acceptance_checks": tuple(acceptance_checks),
            "shared_tools": shared,
            "facts": tuple(facts),
            "outcome_check": outcome_check,
            "mcp_servers": mcp_servers,
            "mcp_tools": kept,
            "eval_cases": None if eval_cases is None else Path(eval_cases),
            "_by_name": _by_name(name, [*given, *((t, _origin(t)) for t in shared)]),
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)  # frozen: set once, here

    @property
    def no_offline_planner(self) -> str:
        """What a run of a pack without an offline planner is told, by the worker and the CLI."""
        return (
            f"the pack {self.name} has no offline planner, so pass --plan or choose an LLM provider"
        )

    def plan_offline(self, planning: PlanningInput) -> Plan:
        """The offline planner's plan; a pack without one cannot be planned offline."""
        if self.offline_plan is None:
            raise PlanningError(self.no_offline_planner)
        return self.offline_plan(planning)

    def report_problems(self, check: CheckInput) -> list[str]:
        """What the pack's own check finds wrong with a report (none without a check)."""
        return [] if self.check is None else self.check(check)

    async def outcome_problems(
        self, outcome: OutcomeInput, services: Mapping[str, object]
    ) -> list[str]:
        """What the eval's outcome check finds wrong with a finished run."""
        if self.outcome_check is not None:
            return await self.outcome_check(outcome, services)
        if not outcome.succeeded:
            return []
        return self.report_problems(CheckInput(outcome.goal, outcome.report or "", outcome.results))

    def catalog(self) -> ToolCatalog:
        """The pack's tools, then the ones every catalog has."""
        return ToolCatalog(scenario=self.name, tools=[tool.spec for tool in self._all_tools()])

    def tool(self, name: str) -> Tool | None:
        return self._by_name.get(name)

    def _all_tools(self) -> tuple[Tool, ...]:
        return (*self.tools, *self.shared_tools)


def _as_tool(pack: str, given: object) -> Tool:
    if isinstance(given, FunctionTool):
        tool: Tool = given.tool
        return tool
    if isinstance(given, Tool):
        return given
    raise PackDefinitionError(
        f"pack {pack}: {given!r} is not a tool; decorate the function with @tool"
    )


def _refuse_bad_name(name: str) -> None:
    if not PACK_NAME.fullmatch(name):
        raise PackDefinitionError(
            f"pack name {name!r}: use 1 to 64 lowercase letters, digits, _ or -, "
            "starting with a letter"
        )


def _refuse_reserved(pack: str, tools: tuple[Tool, ...]) -> None:
    reserved = [t.spec.name for t in tools if reserved_name_reason(t.spec.name)]
    if reserved:
        raise PackDefinitionError(f"pack {pack}: tool names {reserved} are reserved")


def _kept_mcp_tools(pack: str, names: Iterable[str]) -> tuple[str, ...]:
    """The MCP tools a pack keeps, as given: a string is refused (it would be kept letter by
    letter), as are a reserved name (no MCP tool may take one) and an empty list."""
    if isinstance(names, str):
        raise PackDefinitionError(f"pack {pack}: mcp_tools is a list of tool names, not a string")
    kept = tuple(dict.fromkeys(names))
    if not kept:
        raise PackDefinitionError(
            f"pack {pack}: mcp_tools is empty; name the tools to keep, or leave it out for all"
        )
    reserved = [name for name in kept if reserved_name_reason(name)]
    if reserved:
        raise PackDefinitionError(f"pack {pack}: mcp_tools names {reserved} are reserved")
    return kept


def _by_name(pack: str, tools: list[tuple[Tool, str]]) -> dict[str, Tool]:
    """The tools by name; two with one name are refused, naming the functions behind both."""
    found: dict[str, tuple[Tool, str]] = {}
    for tool, origin in tools:
        first = found.setdefault(tool.spec.name, (tool, origin))
        if first[0] is not tool:
            raise PackDefinitionError(
                f"pack {pack}: two tools are named '{tool.spec.name}': "
                f"{first[1]} and {origin}; give one of them another name"
            )
    return {name: tool for name, (tool, _) in found.items()}


def _origin(given: object) -> str:
    """Where a tool is written: its function (a `Tool`'s run function), module and name."""
    function = given.run if isinstance(given, Tool) else given
    module = getattr(function, "__module__", None) or "?"
    return f"{module}.{getattr(function, '__qualname__', type(function).__name__)}"
