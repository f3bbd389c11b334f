"""Cancelling a run by the `cancel` signal, whenever it arrives."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from harness.contracts import CANCEL_SIGNAL
from harness.dag import NodeStatus
from harness.deliveries import CancelRequest
from harness.run import RunPhase, RunRequest, RunResult
from starter.run_results import result_of
from tests.factories import collect, delay, synthetic_plan
from tests.support import history_events, running_worker, start_run
from workflows import AgentRunWorkflow


def _slow_request() -> RunRequest:
    plan = synthetic_plan(delay("slow", 600_000), collect("final", ["slow"]))
    return RunRequest(goal="cancel me", scenario="synthetic", plan=plan)


async def test_a_cancel_sent_before_any_worker_ran_the_run_is_kept(
    client: Client, task_queue: str
) -> None:
    handle = await start_run(client, task_queue, _slow_request())
    await handle.signal(CANCEL_SIGNAL, CancelRequest(reason="changed my mind", actor="human:ann"))
    async with running_worker(client, task_queue):
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.CANCELLED
    assert result.error == "cancelled: changed my mind (by human:ann)"
    assert result.nodes == []


async def test_a_second_cancel_while_the_first_is_pending_changes_nothing(
    client: Client, task_queue: str
) -> None:
    handle = await start_run(client, task_queue, _slow_request())
    await handle.signal(CANCEL_SIGNAL, CancelRequest(reason="first"))
    await handle.signal(CANCEL_SIGNAL, CancelRequest(reason="second"))
    async with running_worker(client, task_queue):
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.CANCELLED
    assert result.error == "cancelled: first (by human:user)"


async def test_a_cancel_signal_while_a_node_runs_ends_the_run_cancelled(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, _slow_request())
        for _ in range(200):
            status = await handle.query(AgentRunWorkflow.status)
            if any(node.status is NodeStatus.RUNNING for node in status.nodes):
                break
            await asyncio.sleep(0.05)
        await handle.signal(CANCEL_SIGNAL, CancelRequest(reason="enough"))
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.CANCELLED
    nodes = {node.id: node for node in result.nodes}
    assert nodes["slow"].status is NodeStatus.SKIPPED
    assert (nodes["slow"].error_message or "").startswith("run cancelled: enough")


@pytest.mark.requires_local_server("the run is started with the Harness* search attributes")
async def test_cancelling_a_run_with_no_pending_waits_publishes_its_phase_once(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, _slow_request(), searchable=True)
        for _ in range(200):
            status = await handle.query(AgentRunWorkflow.status)
            if any(node.status is NodeStatus.RUNNING for node in status.nodes):
                break
            await asyncio.sleep(0.05)
        await handle.signal(CANCEL_SIGNAL, CancelRequest(reason="enough"))
        await result_of(client, handle)
    events = await history_events(client, handle.id)
    signalled = next(
        i
        for i, event in enumerate(events)
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
    )
    published = [
        event
        for event in events[signalled:]
        if event.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
        and "HarnessPhase"
        in event.upsert_workflow_search_attributes_event_attributes.search_attributes.indexed_fields
    ]
    assert len(published) == 1  # CANCELLED; closing no waits and skipping the node publish nothing
