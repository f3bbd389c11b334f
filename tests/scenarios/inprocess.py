"""Run a scenario's offline plan in process, without Temporal: for pure tests of tools and checks.

Nodes run one at a time in plan order (the offline planners emit them in dependency order) with
the same argument binding the workflow uses and the offline writer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue

from activities.llm.scripted import ScriptedProvider, judge_offline
from harness.catalog.llm import JudgeReply, JudgeRequest
from harness.core.errors import FailureContext
from harness.core.plan import Plan
from harness.engine.binding import resolve_arguments
from scenarios import get_scenario
from scenarios.base import CheckInput, Pack, PlanningInput, ToolContext


@dataclass
class LocalRun:
    goal: str
    plan: Plan
    results: dict[str, JsonValue]
    report: str

    def check_input(self, report: str | None = None) -> CheckInput:
        return CheckInput(goal=self.goal, report=report or self.report, results=self.results)


def planning_input(
    scenario: str,
    goal: str,
    failures: list[FailureContext] | None = None,
    previous_plan: Plan | None = None,
) -> PlanningInput:
    return PlanningInput(
        goal=goal,
        catalog=get_scenario(scenario).catalog(),
        attempt=2 if failures else 1,
        failures=failures or [],
        previous_plan=previous_plan,
    )


async def run_tool(scenario: Pack, tool: str, arguments: dict[str, Any]) -> Any:
    """One tool call with JSON arguments, returning its JSON result."""
    found = scenario.tool(tool)
    assert found is not None, f"{tool} is not in the {scenario.name} catalog"
    context = ToolContext(run_id="local", node_id=tool, attempt=1, writer=ScriptedProvider())
    result = await found.call(found.arguments.model_validate(arguments), context)
    return json.loads(json.dumps(result))


async def run_plan(scenario_name: str, goal: str, plan: Plan | None = None) -> LocalRun:
    scenario = get_scenario(scenario_name)
    plan = plan or scenario.plan_offline(planning_input(scenario_name, goal))
    results: dict[str, JsonValue] = {}
    for node in plan.nodes:
        found = scenario.tool(node.tool)
        assert found is not None
        arguments = resolve_arguments(node, found.spec, results)
        results[node.id] = await run_tool(scenario, node.tool, json.loads(json.dumps(arguments)))
    report = results[plan.nodes[-1].id]
    assert isinstance(report, str)
    return LocalRun(goal=goal, plan=plan, results=results, report=report)


def judge(scenario_name: str, run: LocalRun) -> JudgeReply:
    """The offline critic's verdict on the run's report, with the scenario's rubric."""
    rubric = get_scenario(scenario_name).rubric(run.check_input())
    return judge_offline(
        JudgeRequest(
            goal=run.goal,
            report=run.report,
            criteria=rubric.criteria,
            evidence_terms=rubric.evidence_terms,
        )
    )
