"""An agent node on the pydantic-ai runtime (`agent_runtime: pydantic-ai`), offline: pydantic-ai's
durable agent makes its model requests as its own activities, the pack's tools are the
harness's tool activities, and the run settles the node as any agent's."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from harness.engine.agent_node import AgentResult, AgentStop
from harness.engine.run import RunPhase
from tests.agents.plans import two_agents
from tests.support import activity_timeline, execute_run, history_events, running_worker

pytest.importorskip("pydantic_ai")


async def test_an_agent_node_on_pydantic_ai_calls_pack_tools_as_harness_activities_and_answers(
    client: Client, task_queue: str
) -> None:
    request = two_agents().model_copy(update={"agent_runtime": "pydantic-ai"})
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
        child = await history_events(client, f"{result.run_id}-attempt-1-agent-scout")
    assert result.status is RunPhase.SUCCEEDED, result.error
    nodes = {outcome.id: outcome for outcome in result.nodes}
    scout = AgentResult.model_validate(nodes["scout"].result)
    assert scout.stopped is AgentStop.ANSWERED
    assert [(call.tool, call.ok) for call in scout.tool_calls] == [("delay", True), ("echo", True)]
    assert "high tide at 06:10" in scout.answer
    checker = AgentResult.model_validate(nodes["checker"].result)
    assert checker.stopped is AgentStop.ANSWERED and checker.turns == 2
    # the node's child: pydantic-ai's model requests and the harness's own tool activity,
    # whose call id (the idempotency key's node id) is the node's, turn and place, as the
    # built-in loop's is
    summaries = {summary for _, summary in activity_timeline(child)}
    assert "request model: function:harness-offline" in summaries
    assert "delay scout.t1.c1 (ms=5, value=high tide at 06:10)" in summaries
    # the pack's calls ran as the harness's tool calls, counted and charged to the run
    assert result.counts.tool_calls == 3 + 1  # the agents' three calls and collect's
    assert result.usage_by_role["agent"].total_tokens > 0
