"""The one set of test factories: builders for plans, nodes and catalogs, so each test states
only what it is about. Pure: nothing here needs a server or a worker (those helpers are in
tests/support.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from typing import Any

from pydantic import BaseModel, JsonValue

from harness.catalog.tools import ToolCatalog, ToolRole, ToolSpec
from harness.core.errors import FailureContext
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.core.usage import TokenUsage
from harness.engine.budget import BudgetLimits, BudgetSnapshot, BudgetUsage
from harness.engine.dag import DagState
from harness.engine.messages import ToolCallResult
from harness.engine.run import RunCounts, RunPhase, RunRequest, RunResult, WaitTimeouts
from harness.engine.run_state import RunState
from harness.engine.validation import IssueCode, ValidationIssue
from harness.waits.wait_book import Wait, WaitBook, WaitKind
from scenarios import get_scenario
from scenarios.base import PlanningInput

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
"""When every run and wait built here starts."""


def lit(name: str, value: JsonValue) -> ArgumentBinding:
    """A LITERAL binding; use it when an argument is bound more than once."""
    return ArgumentBinding.literal(name, value)


def ref(name: str, node_id: str, path: str | None = None) -> ArgumentBinding:
    """A NODE_RESULT binding of argument `name` to (part of) the result of `node_id`."""
    return ArgumentBinding.node_result(name, node_id, path)


def node(
    node_id: str,
    tool: str,
    *bindings: ArgumentBinding,
    deps: Sequence[str] = (),
    **literals: JsonValue,
) -> PlanNode:
    """A plan node: positional bindings first, then one LITERAL binding per keyword argument."""
    arguments = [*bindings, *(lit(name, value) for name, value in literals.items())]
    return PlanNode(id=node_id, tool=tool, arguments=arguments, deps=list(deps))


def plan(*nodes: PlanNode) -> Plan:
    return Plan(nodes=list(nodes))


def delay(node_id: str, ms: int, deps: list[str] | None = None) -> PlanNode:
    """A synthetic `delay` node that sleeps `ms` and returns its own id as the value."""
    return node(node_id, "delay", deps=deps or [], ms=ms, value=node_id)


def collect(node_id: str, deps: list[str]) -> PlanNode:
    """The synthetic final node: `inputs` bound to the result of each of `deps`."""
    return node(node_id, "collect", *(ref("inputs", dep) for dep in deps), deps=deps)


def synthetic_plan(*nodes: PlanNode) -> Plan:
    """A plan for the synthetic scenario (delay, fail, collect, side_effect, start_job...)."""
    return plan(*nodes)


def approval_request(goal: str = "change prod", **wait_timeouts: float) -> RunRequest:
    """A synthetic run whose side effect waits for approval beside an independent branch."""
    plan = synthetic_plan(
        node("change", "side_effect", target="prod"),
        delay("independent", 10),
        collect("final", ["change", "independent"]),
    )
    timeouts = WaitTimeouts(**wait_timeouts)
    return RunRequest(goal=goal, scenario="synthetic", plan=plan, wait_timeouts=timeouts)


def chain(length: int, tool: str = "delay") -> Plan:
    """n0 <- n1 <- ... : every node depends on the one before it."""
    return plan(*(node(f"n{i}", tool, deps=[f"n{i - 1}"] if i else []) for i in range(length)))


def spec(
    name: str,
    arguments: type[BaseModel],
    *,
    role: ToolRole = ToolRole.DATA,
) -> ToolSpec:
    return ToolSpec.from_model(name, f"test tool {name}", arguments, role=role)


def schema_spec(
    name: str,
    properties: dict[str, Any],
    required: Sequence[str] = (),
    *,
    role: ToolRole = ToolRole.DATA,
) -> ToolSpec:
    """A tool whose argument schema is written by hand (for shapes pydantic does not emit)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return ToolSpec(name=name, description=f"test tool {name}", arguments_schema=schema, role=role)


def make_catalog(*specs: ToolSpec, scenario: str = "test") -> ToolCatalog:
    return ToolCatalog(scenario=scenario, tools=list(specs))


@cache
def cities_catalog() -> ToolCatalog:
    """get_population, get_timezone, summarize_city (city: str) and aggregate_report (final)."""
    return get_scenario("cities").catalog()


@cache
def synthetic_catalog() -> ToolCatalog:
    """delay (ms: 0..600000, value), fail (code: ErrorCode enum) and collect (final, inputs[])."""
    return get_scenario("synthetic").catalog()


def tool_spec(catalog: ToolCatalog, name: str) -> ToolSpec:
    found = catalog.get(name)
    assert found is not None, f"{name} is not in the {catalog.scenario} catalog"
    return found


def cities_request(
    goal: str, failures: Sequence[FailureContext] = (), previous_plan: Plan | None = None
) -> PlanningInput:
    """What the offline cities planner gets; a request with failures is a second attempt."""
    return PlanningInput(
        goal=goal,
        catalog=cities_catalog(),
        attempt=2 if failures else 1,
        failures=list(failures),
        previous_plan=previous_plan,
    )


def codes(issues: Sequence[ValidationIssue]) -> list[IssueCode]:
    return [issue.code for issue in issues]


def only(issues: Sequence[ValidationIssue], code: IssueCode) -> ValidationIssue:
    """The single issue with `code`; fails when there is none or more than one."""
    matching = [issue for issue in issues if issue.code is code]
    assert len(matching) == 1, [issue.describe() for issue in issues]
    return matching[0]


def dag(*nodes: PlanNode) -> DagState:
    return DagState(plan(*nodes))


def tool_call(
    result: JsonValue,
    *,
    attempt: int = 1,
    latency_ms: float = 0.0,
    usage: TokenUsage | None = None,
) -> ToolCallResult:
    """What an activity hands back for one node."""
    return ToolCallResult(result=result, attempt=attempt, latency_ms=latency_ms, usage=usage)


def wait(
    wait_id: str = "w",
    kind: WaitKind = WaitKind.USER_INPUT,
    *,
    operation_id: str | None = None,
    event: str | None = None,
    node_id: str | None = None,
) -> Wait:
    """A PENDING wait opened at START."""
    return Wait(
        id=wait_id,
        kind=kind,
        node_id=node_id,
        prompt=f"waiting on {wait_id}",
        operation_id=operation_id,
        event=event,
        created_at=START,
    )


def wait_book(*waits: Wait) -> WaitBook:
    """A WaitBook with `waits` open, in order."""
    book = WaitBook()
    for opened in waits:
        book.open(opened)
    return book


def run_state(goal: str = "Compare Paris and Tokyo", **request: Any) -> RunState:
    """A fresh run (CREATED, no attempts) started at START; `request` sets RunRequest fields."""
    return RunState(run_id="run-1", request=RunRequest(goal=goal, **request), started_at=START)


def run_result(**fields: Any) -> RunResult:
    """A finished run's RunResult with nothing in it but what `fields` say."""
    defaults: dict[str, Any] = {
        "run_id": "run-1",
        "status": RunPhase.SUCCEEDED,
        "goal": "Compare Paris and Tokyo",
        "scenario": "cities",
        "attempts": 1,
        "attempt_history": [],
        "nodes": [],
        "trace": [],
        "counts": RunCounts(),
        "budget": BudgetSnapshot(limits=BudgetLimits(), usage=BudgetUsage(), pressure=0.0),
        "usage": TokenUsage(),
        "started_at": START,
        "finished_at": START,
        "wall_seconds": 0.0,
    }
    return RunResult.model_validate(defaults | fields)
