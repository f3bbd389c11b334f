"""What a scenario is: typed tools with their data, a report check and offline planning rules."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, JsonValue

from harness.errors import FailureContext
from harness.llm import TextReply, TextRequest, TextWriter
from harness.plan import Plan
from harness.tools import ToolCatalog, ToolSpec
from harness.usage import TokenUsage


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

    async def write(self, request: TextRequest) -> TextReply:
        reply = await self.writer.write(request)
        self.usage = self.usage.plus(reply.usage)
        return reply


ToolFunction = Callable[[Any, ToolContext], Awaitable[JsonValue]]

DeliverResult = Callable[[str, str, JsonValue], Awaitable[None]]
"""How a service reports an operation's outcome to its run: called as (run_id, operation_id,
outcome). The worker passes one that sends the run's `deliver` signal."""


def no_services(deliver: DeliverResult) -> dict[str, object]:
    return {}


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    arguments: type[BaseModel]
    run: ToolFunction


@dataclass(frozen=True)
class PlanningInput:
    goal: str
    catalog: ToolCatalog
    attempt: int
    failures: list[FailureContext]
    previous_plan: Plan | None


@dataclass(frozen=True)
class CheckInput:
    goal: str
    report: str
    results: dict[str, JsonValue]


@dataclass(frozen=True)
class Rubric:
    """What the critic judges a report by: criteria in words, and facts it should repeat."""

    criteria: list[str]
    evidence_terms: list[str] = field(default_factory=list)


def default_rubric(check: CheckInput) -> Rubric:
    return Rubric(criteria=["the report answers the goal using only facts from the tool results"])


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    example_goal: str
    tools: tuple[Tool, ...]
    check: Callable[[CheckInput], list[str]]
    offline_plan: Callable[[PlanningInput], Plan]
    rubric: Callable[[CheckInput], Rubric] = default_rubric
    services: Callable[[DeliverResult], dict[str, object]] = no_services
    """The services the scenario's tools use (ToolContext.services), built once per worker."""

    def catalog(self) -> ToolCatalog:
        return ToolCatalog(scenario=self.name, tools=[tool.spec for tool in self.tools])

    def tool(self, name: str) -> Tool | None:
        return next((tool for tool in self.tools if tool.spec.name == name), None)
