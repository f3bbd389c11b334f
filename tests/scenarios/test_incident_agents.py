"""Incidents runs its investigation branches as agent nodes: the offline plans validate, the
offline agent fills every argument of each branch's tool from the goal the planner wrote, its
call gives the evidence the raw read and analysis step give, and the analysis reads it from the
agents' results. Pure: the loop runs in process (tests/scenarios/inprocess.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue, ValidationError

from activities.llm.offline_agent import next_turn
from harness.catalog.agent_turns import (
    AgentTurnRequest,
    AssistantMessage,
    OfferedTool,
    ToolResultMessage,
)
from harness.core.plan import ArgumentBinding, ArgumentKind, Plan, PlanNode
from harness.engine.agent_conversation import opening_message
from harness.engine.agent_node import AgentArguments, AgentResult, AgentStop, AgentToolCall
from harness.engine.validation import validate_plan
from scenarios import get_scenario
from scenarios.incidents.check import check_incident_report
from scenarios.incidents.data import DEFAULT_SPLIT, clock
from scenarios.incidents.evidence import Source, branch_tool, evidence_in
from scenarios.incidents.planning import parse_symptom, plan_incidents
from scenarios.incidents.tools import AnalyzeArgs
from tests.scenarios.inprocess import planning_input, run_plan, run_tool

INCIDENTS = get_scenario("incidents")
GOALS = {
    "vague": "checkout is slow",
    "onset": "checkout-service 5xx errors increased since 14:00",
    "dependency": "checkout-service 5xx errors increased since 14:00, maybe payments dependency",
    "twelve-hour onset, gateway": "api-gateway p99 latency is up since 2pm",
    "deploy words, no time": "Checkout requests are failing; did a recent deploy or config "
    "change break it?",
    "suspect": "checkout-service 5xx errors, I suspect inventory-service",
}
EVAL_PLANS = Path(__file__).parents[2] / "scenarios" / "incidents" / "eval_plans"
# The raw read whose result each analysis step is given in a plan without agents.
RAW_READ = {
    "compare_periods": ("get_metrics", "metrics"),
    "detect_signatures": ("get_logs", "logs"),
    "find_slow_spans": ("get_traces", "traces"),
}


def offline_plan(goal: str) -> Plan:
    return plan_incidents(planning_input("incidents", goal))


def agent_nodes(plan: Plan) -> list[PlanNode]:
    return [node for node in plan.nodes if node.tool == "agent"]


def agent_arguments(node: PlanNode) -> AgentArguments:
    """An agent node's arguments as the loop reads them (every binding of these plans is a
    literal: the branches depend on nothing)."""
    assert all(b.kind is ArgumentKind.LITERAL for b in node.arguments)
    return AgentArguments.model_validate({b.name: b.value for b in node.arguments})


def first_turn(arguments: AgentArguments) -> AgentTurnRequest:
    """The agent's first turn as the loop opens it: the goal and context, the listed tools."""
    tools = []
    for name in arguments.tools:
        tool = INCIDENTS.tool(name)
        assert tool is not None
        tools.append(OfferedTool.of(tool.spec))
    return AgentTurnRequest(
        run_id="run-1",
        node_id="agent",
        turn=1,
        system="You investigate incidents.",
        messages=[opening_message(arguments.goal, arguments.context)],
        tools=tools,
    )


def named_lines(text: str) -> dict[str, str]:
    return dict(re.findall(r"^([a-z_]+): (.+)$", text, re.MULTILINE))


def cases() -> list[Any]:
    return [
        pytest.param(goal, node, id=f"{label}:{node.id}")
        for label, goal in GOALS.items()
        for node in agent_nodes(offline_plan(goal))
    ]


@pytest.mark.parametrize("goal", list(GOALS.values()), ids=list(GOALS))
def test_every_offline_plan_validates_with_agent_nodes_converging_on_the_analysis(
    goal: str,
) -> None:
    plan = offline_plan(goal)
    assert validate_plan(plan, INCIDENTS.catalog()) == []
    agents = agent_nodes(plan)
    assert agents and plan.nodes[:-1] == agents
    for node in agents:
        arguments = agent_arguments(node)
        assert arguments.tools == [branch_tool(Source(node.id))]
        assert arguments.max_turns <= 3
    analysis = plan.nodes[-1]
    assert analysis.tool == "analyze_evidence"
    assert analysis.deps == [node.id for node in agents]
    assert [b.node_id for b in analysis.arguments if b.name == "investigations"] == analysis.deps


@pytest.mark.parametrize(("goal", "node"), cases())
async def test_the_offline_agent_fills_every_argument_of_its_branch_tool_from_the_goal(
    goal: str, node: PlanNode
) -> None:
    arguments = agent_arguments(node)
    calls, answer = next_turn(first_turn(arguments))
    # Every listed tool is called (none skipped as unfillable), in the first turn.
    assert answer is None
    assert [call.tool for call in calls] == arguments.tools
    named = named_lines(arguments.goal)
    for call in calls:
        tool = INCIDENTS.tool(call.tool)
        assert tool is not None
        schema = tool.spec.arguments_schema
        # Each argument comes from a line of the goal, none from a schema default or example...
        assert set(call.arguments) == set(named)
        assert set(schema.get("required", [])) <= set(call.arguments)
        # ... with the symptom's own values: its service, its onset (else the default split).
        symptom = parse_symptom(goal)
        assert symptom is not None
        split = symptom.since or clock(DEFAULT_SPLIT)
        assert call.arguments.get("split_at", split) == split
        assert call.arguments.get("service", symptom.service) == symptom.service
        services = call.arguments.get("services", [symptom.service])
        assert isinstance(services, list) and symptom.service in services
        tool.arguments.model_validate(call.arguments)


@pytest.mark.parametrize(("goal", "node"), cases())
async def test_an_agents_call_gives_the_evidence_of_the_raw_read_and_the_analysis_step(
    goal: str, node: PlanNode
) -> None:
    arguments = agent_arguments(node)
    (call,) = next_turn(first_turn(arguments))[0]
    by_agent = await run_tool(INCIDENTS, call.tool, call.arguments)
    if call.tool not in RAW_READ:  # deployments and config: the raw read is the evidence
        assert by_agent["source"] == node.id
        return
    read, data = RAW_READ[call.tool]
    reading = {k: v for k, v in call.arguments.items() if k != "split_at"}
    raw = await run_tool(INCIDENTS, read, reading)
    stepped = await run_tool(
        INCIDENTS, call.tool, {data: raw, "split_at": call.arguments["split_at"]}
    )
    assert by_agent == stepped
    assert by_agent["source"] == node.id


@pytest.mark.parametrize(("goal", "node"), cases())
async def test_an_agent_answers_in_its_second_turn_within_its_max_turns(
    goal: str, node: PlanNode
) -> None:
    arguments = agent_arguments(node)
    request = first_turn(arguments)
    calls, _ = next_turn(request)
    results = [
        ToolResultMessage(
            call_id=call.id,
            tool=call.tool,
            ok=True,
            result=await run_tool(INCIDENTS, call.tool, call.arguments),
        )
        for call in calls
    ]
    messages = [*request.messages, AssistantMessage(tool_calls=calls), *results]
    second = request.model_copy(update={"turn": 2, "messages": messages})
    assert second.problems() == []
    more, answer = next_turn(second)
    assert more == [] and answer is not None
    assert f"- {branch_tool(Source(node.id))}: " in answer
    assert arguments.max_turns >= second.turn


def single_call_plan(plan: Plan) -> Plan:
    """The plan without agents: each agent's call as plain nodes (a raw read and the analysis
    step given its result, as plans were before agents), bound to the analysis by source."""
    literal, result = ArgumentBinding.literal, ArgumentBinding.node_result
    nodes: list[PlanNode] = []
    bound: list[ArgumentBinding] = []
    for node in agent_nodes(plan):
        ((call,), _) = next_turn(first_turn(agent_arguments(node)))
        if call.tool in RAW_READ:
            read, data = RAW_READ[call.tool]
            reading = [literal(k, v) for k, v in call.arguments.items() if k != "split_at"]
            nodes.append(PlanNode(id=f"{node.id}_read", tool=read, arguments=reading))
            step = [
                result(data, f"{node.id}_read"),
                literal("split_at", call.arguments["split_at"]),
            ]
            nodes.append(
                PlanNode(id=node.id, tool=call.tool, arguments=step, deps=[f"{node.id}_read"])
            )
        else:
            arguments = [literal(k, v) for k, v in call.arguments.items()]
            nodes.append(PlanNode(id=node.id, tool=call.tool, arguments=arguments))
        bound.append(result(node.id, node.id))
    analysis = plan.nodes[-1]
    about = [b for b in analysis.arguments if b.name != "investigations"]
    nodes.append(
        analysis.model_copy(
            update={"arguments": [*about, *bound], "deps": [b.node_id for b in bound]}
        )
    )
    return Plan(nodes=nodes)


@pytest.mark.parametrize("goal", list(GOALS.values()), ids=list(GOALS))
async def test_the_agent_plan_reports_what_a_plan_of_single_tool_calls_reports(
    goal: str,
) -> None:
    by_agents = await run_plan("incidents", goal)
    assert all(
        AgentResult.model_validate(by_agents.results[node.id]).stopped is AgentStop.ANSWERED
        for node in agent_nodes(by_agents.plan)
    )
    plain_plan = single_call_plan(by_agents.plan)
    assert validate_plan(plain_plan, INCIDENTS.catalog()) == []
    assert "agent" not in {node.tool for node in plain_plan.nodes}
    plain = await run_plan("incidents", goal, plain_plan)
    assert evidence_in(by_agents.results).investigated() == [
        Source(node.id) for node in agent_nodes(by_agents.plan)
    ]
    assert evidence_in(by_agents.results) == evidence_in(plain.results)
    assert by_agents.report == plain.report
    assert check_incident_report(by_agents.check_input()) == check_incident_report(
        plain.check_input()
    )


async def test_the_eval_plan_of_single_tool_calls_still_runs_and_passes_the_check() -> None:
    plan = Plan.model_validate_json((EVAL_PLANS / "checkout-four-sources.json").read_text())
    assert validate_plan(plan, INCIDENTS.catalog()) == []
    run = await run_plan("incidents", GOALS["onset"], plan)
    assert check_incident_report(run.check_input()) == []
    assert "**Confidence:** 0.80 (high)" in run.report


async def test_the_analysis_reads_an_agents_ok_calls_and_a_direct_binding_comes_first() -> None:
    deployments = await run_tool(INCIDENTS, "get_deployments", {})
    config = await run_tool(INCIDENTS, "get_config_changes", {})
    later = await run_tool(INCIDENTS, "get_config_changes", {"start": "14:30"})
    agent = AgentResult(
        answer="found",
        turns=2,
        tool_calls=[
            AgentToolCall(tool="get_config_changes", ok=False, error="rate limited"),
            AgentToolCall(tool="get_deployments", ok=True, result=deployments),
            AgentToolCall(tool="get_config_changes", ok=True, result=config),
        ],
        stopped=AgentStop.ANSWERED,
    ).model_dump(mode="json")
    args = AnalyzeArgs.model_validate(
        {"service": "checkout-service", "investigations": [agent], "config": later}
    )
    gathered = args.gathered()
    assert gathered.investigated() == [Source.DEPLOYMENTS, Source.CONFIG]
    assert gathered.deployments is not None
    assert gathered.deployments.model_dump(mode="json") == deployments
    assert gathered.config is not None and gathered.config.model_dump(mode="json") == later
    assert later != config


def test_an_agent_result_with_no_ok_call_gives_no_evidence() -> None:
    agent = AgentResult(
        answer="nothing",
        turns=3,
        tool_calls=[AgentToolCall(tool="get_deployments", ok=False, error="rate limited")],
        stopped=AgentStop.MAX_TURNS,
    ).model_dump(mode="json")
    assert evidence_in({"deployments": agent}).investigated() == []


@pytest.mark.parametrize(
    ("tool", "arguments", "refusal"),
    [
        (
            "compare_periods",
            {"metrics": [], "services": ["payments-service"], "split_at": "14:00"},
            "give either metrics (the result to analyse) or services (what to read), not both",
        ),
        (
            "detect_signatures",
            {"logs": [], "start": "13:30", "split_at": "14:00"},
            "give either logs (the result to analyse) or start (what to read), not both",
        ),
        (
            "find_slow_spans",
            {"split_at": "14:00"},
            "find_slow_spans needs traces (the get_traces result) or a service to read them for",
        ),
    ],
)
def test_an_analysis_step_takes_its_data_or_what_to_read_never_both_nor_neither(
    tool: str, arguments: dict[str, JsonValue], refusal: str
) -> None:
    found = INCIDENTS.tool(tool)
    assert found is not None
    with pytest.raises(ValidationError, match=re.escape(refusal)):
        found.arguments.model_validate(arguments)
