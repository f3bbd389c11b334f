"""Run a scenario's offline plan in process, without Temporal: for pure tests of tools and checks.

Nodes run one at a time in plan order (the offline planners emit them in dependency order) with
the same argument binding the workflow uses and the offline writer. An agent node runs the
offline provider's agent turn by turn, its calls one after another, and returns its
`AgentResult`: the loop's rules without Temporal (the run's child workflow is the durable one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue, ValidationError

from activities.llm.scripted import ScriptedProvider, judge_offline
from harness.catalog.agent_turns import (
    AgentMessage,
    AgentTurnRequest,
    OfferedTool,
    ToolCall,
    ToolResultMessage,
)
from harness.catalog.llm import JudgeReply, JudgeRequest
from harness.core.errors import FailureContext, ToolError
from harness.core.plan import Plan
from harness.engine.agent_conversation import opening_message
from harness.engine.agent_node import (
    AGENT_TOOL,
    AgentArguments,
    AgentResult,
    AgentStop,
    AgentToolCall,
)
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


def agent_turn_request(
    scenario: Pack, arguments: AgentArguments, messages: list[AgentMessage], turn: int
) -> AgentTurnRequest:
    """The turn request of an agent node with `arguments`, offering its listed tools."""
    offered = []
    for name in arguments.tools:
        found = scenario.tool(name)
        assert found is not None, f"{name} is not in the {scenario.name} catalog"
        offered.append(OfferedTool.of(found.spec))
    return AgentTurnRequest(
        run_id="local",
        node_id="agent",
        turn=turn,
        system="You investigate with the tools offered.",
        messages=messages,
        tools=offered,
    )


async def run_agent(scenario: Pack, arguments: dict[str, Any]) -> JsonValue:
    """An agent node's loop with the offline provider: turns until it answers or max_turns."""
    agent = AgentArguments.model_validate(arguments)
    messages: list[AgentMessage] = [opening_message(agent.goal, agent.context)]
    made: list[AgentToolCall] = []
    for turn in range(1, agent.max_turns + 1):
        reply = await ScriptedProvider().agent_turn(
            agent_turn_request(scenario, agent, messages, turn)
        )
        messages.append(reply.message())
        if reply.answer is not None:
            done = AgentResult(
                answer=reply.answer, turns=turn, tool_calls=made, stopped=AgentStop.ANSWERED
            )
            return done.model_dump(mode="json")
        for call in reply.tool_calls:
            outcome = await _agent_call(scenario, call)
            messages.append(outcome)
            made.append(
                AgentToolCall(
                    tool=call.tool,
                    arguments=call.arguments,
                    ok=outcome.ok,
                    result=outcome.result,
                    error=outcome.error,
                )
            )
    stopped = AgentResult(
        answer="no answer within max_turns",
        turns=agent.max_turns,
        tool_calls=made,
        stopped=AgentStop.MAX_TURNS,
    )
    return stopped.model_dump(mode="json")


async def _agent_call(scenario: Pack, call: ToolCall) -> ToolResultMessage:
    """One call an agent asked for: its result, or the error the model is told."""
    try:
        result = await run_tool(scenario, call.tool, call.arguments)
    except (ToolError, ValidationError) as error:
        return ToolResultMessage(call_id=call.id, tool=call.tool, ok=False, error=str(error))
    return ToolResultMessage(call_id=call.id, tool=call.tool, ok=True, result=result)


async def run_plan(scenario_name: str, goal: str, plan: Plan | None = None) -> LocalRun:
    scenario = get_scenario(scenario_name)
    plan = plan or scenario.plan_offline(planning_input(scenario_name, goal))
    results: dict[str, JsonValue] = {}
    for node in plan.nodes:
        found = scenario.tool(node.tool)
        assert found is not None
        arguments = json.loads(json.dumps(resolve_arguments(node, found.spec, results)))
        if node.tool == AGENT_TOOL:
            results[node.id] = await run_agent(scenario, arguments)
        else:
            results[node.id] = await run_tool(scenario, node.tool, arguments)
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
