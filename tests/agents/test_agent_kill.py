"""An agent's loop survives its worker: killed with SIGKILL mid-loop, the run succeeds on
another worker, and nothing the loop finished runs again (the tally pack counts every call)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from durable_harness._client.run_results import result_of
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.agent_node import AgentResult, AgentStop
from harness.engine.run import RunPhase, RunRequest
from tests.scenarios.tally import TALLY_FILE, lines
from tests.support import history_events, start_run
from tests.worker_processes import workers

SECONDS = 240.0


def tally_plan() -> Plan:
    scout = PlanNode(
        id="scout",
        tool="agent",
        arguments=[
            ArgumentBinding.literal("goal", "Count the kelp.\nlabel: kelp"),
            ArgumentBinding.literal("tools", ["tally", "linger"]),
            ArgumentBinding.literal("max_turns", 3),
        ],
    )
    report = PlanNode(
        id="report",
        tool="write_report",
        arguments=[ArgumentBinding.node_result("inputs", "scout")],
        deps=["scout"],
    )
    return Plan(nodes=[scout, report])


async def until_line(path: Path, line: str) -> None:
    """Wait (generously: worker processes start slowly on a loaded machine) for `line`."""
    for _ in range(int(SECONDS / 0.05)):
        if line in lines(path):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never had {line!r}: {lines(path)}")


@pytest.mark.waits_out_timeouts
async def test_a_worker_killed_mid_loop_repeats_no_finished_turn_or_call(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    counts = tmp_path / "tally.txt"
    environment = {"HARNESS_PACKS": "tests.scenarios.tally:TALLY", TALLY_FILE: str(counts)}
    async with workers(client, task_queue, None, tmp_path / "workers.log", environment) as pool:
        first = await pool.start()
        handle = await start_run(
            client, task_queue, RunRequest(goal="kelp", scenario="tally", plan=tally_plan())
        )
        # turn 1 asked for both calls: tally has finished, linger is in flight
        await until_line(counts, "linger-start scout.t1.c2 1")
        await until_line(counts, "tally scout.t1.c1 1")
        pool.kill(first)
        await pool.start()
        result = await asyncio.wait_for(result_of(client, handle), timeout=SECONDS)
        child = await history_events(client, f"{handle.id}-attempt-1-agent-scout")
    assert result.status is RunPhase.SUCCEEDED, result.error
    scout = AgentResult.model_validate(next(n for n in result.nodes if n.id == "scout").result)
    assert scout.stopped is AgentStop.ANSWERED and scout.turns == 2
    assert [(call.tool, call.ok) for call in scout.tool_calls] == [
        ("tally", True),
        ("linger", True),
    ]
    # tally finished before the kill and never ran again; linger, in flight, ran once more
    assert [line for line in lines(counts) if line.startswith("tally")] == ["tally scout.t1.c1 1"]
    assert "linger-done scout.t1.c2 2" in lines(counts)
    # every activity of the loop started once, but the call that was in flight at the kill
    started = [
        event.activity_task_started_event_attributes.attempt
        for event in child
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    ]
    assert sorted(started) == [1, 1, 1, 2]  # turn 1, tally, turn 2, and linger's second
