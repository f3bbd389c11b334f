"""Agent nodes in real runs: each node's loop is a child workflow whose model turns and tool
calls are activities of its own history, charged to the run's one budget."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus

from harness.core.plan import Plan
from harness.engine.agent_node import AgentResult, AgentStop
from harness.engine.budget import BudgetLimits
from harness.engine.dag import NodeStatus
from harness.engine.run import RunPhase, RunRequest, ScaleOptions
from harness.engine.trace import AgentRole, TraceKind
from harness.engine.validation import validate_plan
from scenarios import get_scenario
from tests.agents.plans import one_agent, two_agents
from tests.docs_pages import block_after, page
from tests.factories import collect, lit, node, synthetic_plan
from tests.starter.test_cli import harness
from tests.support import activity_timeline, execute_run, history_events, running_worker


async def test_two_agent_nodes_run_their_loops_as_children_and_the_run_succeeds(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, two_agents())
        child = await history_events(client, f"{result.run_id}-attempt-1-agent-scout")
    code, table, err = await harness("trace", result.run_id, client=client, task_queue=task_queue)
    assert result.status is RunPhase.SUCCEEDED, result.error
    nodes = {outcome.id: outcome for outcome in result.nodes}
    scout = AgentResult.model_validate(nodes["scout"].result)
    assert scout.stopped is AgentStop.ANSWERED
    assert [(call.tool, call.ok) for call in scout.tool_calls] == [("delay", True), ("echo", True)]
    assert scout.tool_calls[0].result == {"ms": 5, "value": "high tide at 06:10"}
    assert "high tide at 06:10" in scout.answer
    checker = AgentResult.model_validate(nodes["checker"].result)
    assert checker.stopped is AgentStop.ANSWERED and checker.turns == 2
    # the child's history holds its turns and calls, each an activity of its own
    summaries = [summary for _, summary in activity_timeline(child)]
    assert "agent scout turn 1" in summaries and "agent scout turn 2" in summaries
    assert any(s.startswith("delay scout.t1.c1 (") for s in summaries)
    # (echo, a cheap in-memory tool, ran as a local activity: a marker in that history)
    # the run's trace shows the turns and calls under their nodes, and the agent's own usage
    steps = [(e.kind, e.node_id, e.tool) for e in result.trace if e.role == AgentRole.AGENT]
    assert (TraceKind.AGENT_CALL, "scout", "delay") in steps
    assert (TraceKind.AGENT_TURN, "checker", "agent") in steps
    assert result.usage_by_role["agent"].total_tokens > 0
    assert result.counts.tool_calls == 3 + 1  # the agents' three calls and collect's
    # `harness trace` lists each turn under its node and each call under it by its own id
    assert code == 0, err
    rows = [line.split()[1:4] for line in table.splitlines()[1:-1]]
    assert ["agent.turn", "scout", "agent"] in rows
    assert ["agent.call", "scout.t1.c1", "delay"] in rows
    assert ["agent.call", "checker.t1.c1", "echo"] in rows


@pytest.mark.parametrize(
    "limits",
    [BudgetLimits(max_tool_calls=2), BudgetLimits(max_tokens=1_000)],
    ids=["max_tool_calls", "max_tokens"],
)
async def test_a_spent_budget_stops_an_agent_loop_and_the_run_never_passes_its_limit(
    client: Client, task_queue: str, limits: BudgetLimits
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, one_agent(limits))
    scout = AgentResult.model_validate(next(n for n in result.nodes if n.id == "scout").result)
    assert scout.stopped is AgentStop.BUDGET
    assert "budget" in scout.answer
    if limits.max_tool_calls is not None:  # collect has no call left: the run cannot finish
        assert result.status is RunPhase.BUDGET_EXHAUSTED
        assert result.counts.tool_calls == limits.max_tool_calls
        assert sum(call.ok for call in scout.tool_calls) == limits.max_tool_calls
    if limits.max_tokens is not None:  # a turn no longer fits; collect, no model call, runs
        assert scout.turns == 1 and len(scout.tool_calls) == 3
        assert result.usage_by_role["agent"].total_tokens <= limits.max_tokens
        assert result.status is RunPhase.SUCCEEDED


async def test_an_agent_loop_continues_as_new_between_turns_and_ends_as_it_would_have(
    client: Client, task_queue: str
) -> None:
    request = two_agents()
    request.scale = ScaleOptions(agent_turns_per_run=1)  # every turn in a run of its own
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
        latest = await client.get_workflow_handle(
            f"{result.run_id}-attempt-1-agent-scout"
        ).describe()
        events = await history_events(client, f"{result.run_id}-attempt-1-agent-scout")
    assert result.status is RunPhase.SUCCEEDED, result.error
    scout = AgentResult.model_validate(next(n for n in result.nodes if n.id == "scout").result)
    assert scout.stopped is AgentStop.ANSWERED and scout.turns == 2
    assert [call.tool for call in scout.tool_calls] == ["delay", "echo"]
    # the scout's second turn ran in the run its first continued as new into, with the
    # conversation and calls carried over
    started = events[0].workflow_execution_started_event_attributes
    assert (
        started.continued_execution_run_id and latest.run_id != started.continued_execution_run_id
    )
    scheduled = [summary for kind, summary in activity_timeline(events) if kind == "scheduled"]
    assert scheduled == ["agent scout turn 2"]
    assert [e.kind for e in result.trace if e.node_id == "scout"].count(TraceKind.AGENT_TURN) == 2


async def test_the_docs_plan_of_two_agents_runs_offline_and_succeeds(
    client: Client, task_queue: str
) -> None:
    plan = Plan.model_validate_json(
        block_after(page("agent-nodes"), "## A plan with two agents", "json")
    )
    assert validate_plan(plan, get_scenario("cities").catalog()) == []
    request = RunRequest(goal="Compare Paris and Tokyo", plan=plan)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED, result.error
    for city in ("paris", "tokyo"):
        agent = AgentResult.model_validate(next(n for n in result.nodes if n.id == city).result)
        assert [(call.tool, call.ok) for call in agent.tool_calls] == [
            ("get_population", True),
            ("get_timezone", True),
        ]


async def test_an_agent_whose_model_turn_fails_fails_its_node_and_the_run_names_the_provider(
    client: Client, task_queue: str
) -> None:
    request = two_agents()
    assert request.plan is not None
    scout = request.plan.nodes[0]
    scout.arguments.append(lit("model", "gpt-4.1"))  # not a model the offline provider serves
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_PROVIDER
    failed = next(n for n in result.nodes if n.id == "scout")
    assert failed.error_code == "CONFIG_INVALID"
    assert failed.error_message is not None and "turn 1 of the agent failed" in failed.error_message
    assert "gpt-4.1" in failed.error_message


async def test_a_run_that_halts_stops_its_running_agent_instead_of_letting_it_take_turns(
    client: Client, task_queue: str
) -> None:
    slow = node("slow", "agent", goal="Wait and see.\nms: 600000", tools=["delay"])
    boom = node("boom", "fail", code="TOOL_EXECUTION_FAILED", times=5)
    plan = synthetic_plan(slow, boom, collect("end", ["slow", "boom"]))
    request = RunRequest(goal="halt", scenario="synthetic", plan=plan)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
        child = await client.get_workflow_handle(f"{result.run_id}-attempt-1-agent-slow").describe()
    assert result.status is RunPhase.FAILED_EXECUTION
    agent = next(n for n in result.nodes if n.id == "slow")
    assert agent.status is NodeStatus.SKIPPED and agent.error_message is not None
    assert "run halted" in agent.error_message
    assert child.status == WorkflowExecutionStatus.CANCELED


async def test_an_agent_loop_tells_the_run_its_progress_in_the_task_that_schedules_its_next_turn(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, two_agents())
        child = await history_events(client, f"{result.run_id}-attempt-1-agent-scout")
    assert result.status is RunPhase.SUCCEEDED, result.error
    kinds = [event.event_type for event in child]
    told = kinds.index(EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED)
    # the report and turn 2 are commands of one workflow task: no round trip between them
    turn_2 = next(
        index
        for index, event in enumerate(child)
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.user_metadata.summary.data.decode().strip('"') == "agent scout turn 2"
    )
    between = kinds[min(told, turn_2) + 1 : max(told, turn_2)]
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED not in between
    # and the run heard it before the loop ended: its trace shows the call of turn 1
    steps = [(e.kind, e.node_id, e.tool) for e in result.trace if e.role == AgentRole.AGENT]
    assert (TraceKind.AGENT_CALL, "scout", "delay") in steps
