"""The flight recorder: the trace comes back from workflow history alone."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from durable_harness._client import history, runs
from durable_harness._client.run_results import result_of
from harness.engine.budget import BudgetLimits
from harness.engine.faults import FaultSpec
from harness.engine.run import RunPhase, RunRequest
from harness.engine.trace import TraceEvent
from infra.settings import Settings
from tests.factories import approval_request, collect, delay, synthetic_plan
from tests.starter.test_cli import harness
from tests.support import (
    execute_run,
    history_events,
    node_of,
    pending_wait,
    running_worker,
    start_run,
)
from workflows import AgentRunWorkflow


async def test_trace_rebuilt_from_history_equals_the_workflow_trace_query(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(
        goal="Compare Paris, Atlantis and Tokyo",
        faults=[FaultSpec.parse("get_timezone:Paris=RATE_LIMITED*1")],
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
        queried = await client.get_workflow_handle(result.run_id).query(AgentRunWorkflow.trace)
    rebuilt = await history.trace_of(client, result.run_id)
    kinds = {event.kind.value for event in rebuilt.trace}
    assert {"node.retry", "recovery.decide", "run.finish"} <= kinds
    assert result.attempts == 2
    assert rebuilt.trace == queried == result.trace
    assert rebuilt.status.phase is RunPhase.SUCCEEDED


async def test_trace_of_a_run_whose_worker_stopped_is_still_readable(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        delay("quick", 10), delay("stuck", 600_000), collect("end", ["quick", "stuck"])
    )
    run_id = f"stopped-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            AgentRunWorkflow.run,
            RunRequest(goal="never ends", scenario="synthetic", plan=plan),
            id=run_id,
            task_queue=task_queue,
        )
        for _ in range(100):
            status = await handle.query(AgentRunWorkflow.status)
            if status.counts.done == 1:
                break
            await asyncio.sleep(0.1)
    rebuilt = await history.trace_of(client, run_id)
    await handle.terminate("test finished")
    assert rebuilt.status.phase is RunPhase.EXECUTING
    finished = [e.node_id for e in rebuilt.trace if e.kind == "node.finish"]
    started = [e.node_id or "" for e in rebuilt.trace if e.kind == "node.start"]
    assert finished == ["quick"]
    assert sorted(started) == ["quick", "stuck"]


@pytest.mark.requires_local_server("filters runs by search attributes")
async def test_a_finished_run_is_found_by_phase_and_scenario(
    client: Client, task_queue: str
) -> None:
    settings = Settings(
        temporal_address=client.service_client.config.target_host, task_queue=task_queue
    )
    run_id = f"sa-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        await runs.start_run(client, settings, RunRequest(goal="Compare Paris and Tokyo"), run_id)
        await client.get_workflow_handle(run_id).result()
    query = f'WorkflowId="{run_id}" AND HarnessPhase="SUCCEEDED" AND HarnessScenario="cities"'
    found: list[str] = []
    for _ in range(50):  # visibility is eventually consistent
        found = [wf.id async for wf in client.list_workflows(query)]
        if found:
            break
        await asyncio.sleep(0.1)
    assert found == [run_id]


async def test_harness_trace_prints_ordered_events_with_node_latency(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
    code, out, err = await harness("trace", result.run_id, client=client, task_queue=task_queue)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split()[1] == "run.start"
    assert "run.finish" in lines[-2]
    finish_lines = [line for line in lines if "node.finish" in line]
    assert len(finish_lines) == 7
    assert all(line.split()[-2].isdigit() for line in finish_lines)
    code, out, _ = await harness(
        "trace", result.run_id, "--jsonl", client=client, task_queue=task_queue
    )
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["kind"] for e in events] == [e.kind.value for e in result.trace]


def activity_spans_ms(events: list[HistoryEvent]) -> dict[str, float]:
    """Per node, from its activity's Started event to its Completed event, by the history."""
    node_of_scheduled: dict[int, str] = {}
    started: dict[int, datetime] = {}
    spans: dict[str, float] = {}
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            summary = event.user_metadata.summary.data.decode().strip('"')
            node_of_scheduled[event.event_id] = node_of(summary)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            scheduled = event.activity_task_started_event_attributes.scheduled_event_id
            started[scheduled] = event.event_time.ToDatetime(UTC)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            scheduled = event.activity_task_completed_event_attributes.scheduled_event_id
            ended = event.event_time.ToDatetime(UTC)
            spans[node_of_scheduled[scheduled]] = (
                ended - started[scheduled]
            ).total_seconds() * 1000
    return spans


async def test_node_latencies_in_the_trace_are_the_activities_own_as_the_history_shows(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
    spans = activity_spans_ms(await history_events(client, result.run_id))
    finished = {e.node_id or "": e for e in result.trace if e.kind.value == "node.finish"}
    nodes = {node.id: node for node in result.nodes}
    assert set(finished) == set(nodes)
    for node_id, event in finished.items():
        scheduled = event.data["scheduled_ms"]
        assert event.latency_ms is not None and isinstance(scheduled, float)
        # the activity's own clock, not the workflow's ...
        assert event.latency_ms == pytest.approx(nodes[node_id].tool_latency_ms, abs=0.001)
        # ... inside the history's span, which also holds the result's trip to the server
        assert spans[node_id] - event.latency_ms > -1, (node_id, event.latency_ms, spans)
        assert scheduled >= event.latency_ms
    assert [e.at for e in result.trace] == sorted(e.at for e in result.trace)


async def test_the_trace_of_a_run_waiting_for_approval_holds_only_what_the_run_recorded(
    client: Client, task_queue: str
) -> None:
    """Replaying an open history ends by evicting the run; nothing of that is the run's."""
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        for _ in range(100):  # until the branch beside the approval has finished: then quiet
            live = await handle.query(AgentRunWorkflow.trace)
            if any(e.kind.value == "node.finish" for e in live):
                break
            await asyncio.sleep(0.05)
        live_waits = await handle.query(AgentRunWorkflow.waits)
        rebuilt = await history.trace_of(client, handle.id)
        await handle.terminate("test finished")

    def seen(events: list[TraceEvent]) -> list[tuple[str, str | None, str | None]]:
        return [(e.kind.value, e.node_id, e.status) for e in events]

    assert seen(rebuilt.trace) == seen(live)
    assert all(e.at >= live[0].at for e in rebuilt.trace)
    assert [w.status for w in rebuilt.waits] == [w.status for w in live_waits]
    assert rebuilt.status.phase is RunPhase.WAITING


async def test_the_trace_table_says_why_a_node_failed_and_what_recovery_decided(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(
            client, task_queue, RunRequest(goal="Compare Paris, Atlantis and Tokyo")
        )
    code, out, err = await harness("trace", result.run_id, client=client, task_queue=task_queue)
    assert code == 0, err
    failed = [line for line in out.splitlines() if " node.fail " in line]
    decided = [line for line in out.splitlines() if " recovery.decide " in line]
    assert failed and all("MISSING_INFO" in line and "Atlantis" in line for line in failed)
    assert decided and "REPLAN" in decided[0]


@pytest.mark.requires_local_server("starts a run with the Harness* search attributes")
async def test_a_run_started_by_the_cli_has_static_details_with_its_limits_and_commands(
    client: Client, task_queue: str
) -> None:
    settings = Settings(
        temporal_address=client.service_client.config.target_host, task_queue=task_queue
    )
    run_id = f"static-{uuid.uuid4().hex[:8]}"
    request = RunRequest(goal="Compare Paris and Tokyo", limits=BudgetLimits(max_tool_calls=40))
    async with running_worker(client, task_queue):
        await runs.start_run(client, settings, request, run_id)
        await result_of(client, client.get_workflow_handle(run_id))
    description = await client.get_workflow_handle(run_id).describe()
    static = await description.static_details() or ""
    assert "**cities**: Compare Paris and Tokyo" in static
    assert "budget: tool calls 40" in static
    assert f"`harness trace {run_id}`" in static
