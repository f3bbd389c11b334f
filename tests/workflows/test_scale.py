"""Scheduling properties the benchmarks rely on: batched scheduling, bounded history per node,
wide plans split across child workflows with every result intact."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from harness.plan import Plan
from harness.run import RunPhase, RunRequest, ScaleOptions
from tests.factories import node, ref, synthetic_plan
from tests.support import execute_run, history_events, running_worker


def _fan_out(width: int) -> Plan:
    leaves = [node(f"n{i}", "delay", ms=0, value=i) for i in range(width)]
    final = node("final", "collect", ref("inputs", "n0"), deps=[leaf.id for leaf in leaves])
    return synthetic_plan(*leaves, final)


def _count(events: list, kind: EventType.ValueType) -> int:  # type: ignore[type-arg]
    return sum(1 for event in events if event.event_type == kind)


async def test_ready_nodes_are_scheduled_together_in_one_workflow_task(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(
            client,
            task_queue,
            RunRequest(goal="fan", scenario="synthetic", plan=_fan_out(50), max_concurrency=50),
        )
    events = await history_events(client, result.run_id)
    scheduled = [
        e.activity_task_scheduled_event_attributes.workflow_task_completed_event_id
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == "harness.run_tool"
    ]
    assert len(scheduled) == 51
    assert len(set(scheduled[:50])) == 1  # all 50 leaves in one workflow task completion


async def test_history_stays_near_three_events_per_node(client: Client, task_queue: str) -> None:
    width = 200
    async with running_worker(client, task_queue):
        result = await execute_run(
            client,
            task_queue,
            RunRequest(
                goal="fan", scenario="synthetic", plan=_fan_out(width), max_concurrency=width
            ),
        )
    assert result.status is RunPhase.SUCCEEDED
    events = await history_events(client, result.run_id)
    assert len(events) / (width + 1) <= 4.5


async def test_a_wide_plan_runs_in_child_batches_named_for_their_attempt_and_keeps_every_result(
    client: Client, task_queue: str
) -> None:
    width = 60
    scale = ScaleOptions(batch_plan_nodes=10, batch_min_ready=5, batch_size=25)
    request = RunRequest(
        goal="wide", scenario="synthetic", plan=_fan_out(width), max_concurrency=8, scale=scale
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    results = {node.id: node.result for node in result.nodes}
    assert all(results[f"n{i}"] == {"ms": 0, "value": i} for i in range(width))
    assert result.report == "collected 1 results"
    parent = await history_events(client, result.run_id)
    children = _count(parent, EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
    assert children == 3  # 25 + 25 + 10 leaves
    leaf_activities = [
        e
        for e in parent
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.user_metadata.summary.data.decode().strip('"').startswith("n")
    ]
    assert leaf_activities == []
    for number in (1, 2, 3):
        child = await history_events(client, f"{result.run_id}-attempt-1-batch-{number}")
        completed = _count(child, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
        assert completed == (25 if number < 3 else 10)
        # at most 3 events per activity plus one workflow task (3 events) per completion
        assert len(child) <= 6 * 25 + 10


async def test_completions_that_arrive_together_are_handled_in_shared_workflow_tasks(
    client: Client, task_queue: str
) -> None:
    width = 50
    async with running_worker(client, task_queue):
        result = await execute_run(
            client,
            task_queue,
            RunRequest(goal="fan", scenario="synthetic", plan=_fan_out(width), max_concurrency=50),
        )
    events = await history_events(client, result.run_id)
    completions = _count(events, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
    tasks = _count(events, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    assert completions == width + 3  # the leaves, the final node, the judge and the episode
    assert tasks <= completions // 2  # one workflow task takes many completions at once
