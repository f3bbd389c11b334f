"""What each of the worker's task queues carries is stated once (infra.queues) and registered by
the worker's queue plugin: the run's queue its workflows and every activity they call, the model
queue the model calls and nothing else, no workflow at all.

The sets are held against what the workflows' source calls and what the recorded histories
scheduled, on which queue, without a server; the plugin is held against the worker's own
activity implementations, and one worker against a real server's pollers."""

from __future__ import annotations

import ast
import asyncio
import base64
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio import activity, workflow
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from activities.llm import ProviderRegistry, ScriptedProvider
from activities.mcp_hub import McpHub
from harness.engine import contracts
from harness.engine.contracts import LLM_QUEUE_SUFFIX, llm_task_queue
from infra.plugin import HarnessPlugin
from infra.queues import QUEUES, WORKFLOWS, Queue, queue_of
from memory import MemoryStore, open_store
from worker.app import build_worker, worker_activities
from worker.queue_plugin import Activity, QueuePlugin, activity_name

ROOT = Path(__file__).parent.parent
HISTORIES = ROOT / "tests" / "histories"
RUN_QUEUE = "queues-test"
LOCAL_ACTIVITY_MARKER = "core_local_activity"


def workflow_name(flow: type) -> str:
    definition = workflow._Definition.must_from_class(flow)
    assert definition.name is not None
    return definition.name


def recorded_events() -> Iterator[dict[str, dict[str, object]]]:
    for path in sorted(HISTORIES.rglob("*.json")):
        recorded = json.loads(path.read_text())
        if isinstance(recorded, dict) and "events" in recorded:
            yield from recorded["events"]


def scheduled_in_histories() -> set[tuple[str, Queue]]:
    """(activity, the queue it went to) for every activity a recorded history scheduled; a local
    activity runs on its workflow's own worker, the run's queue."""
    found: set[tuple[str, Queue]] = set()
    for event in recorded_events():
        if scheduled := event.get("activityTaskScheduledEventAttributes"):
            name = scheduled["activityType"]["name"]  # type: ignore[index]
            queue_name: str = scheduled["taskQueue"]["name"]  # type: ignore[index]
            found.add((name, Queue.LLM if queue_name.endswith(LLM_QUEUE_SUFFIX) else Queue.RUN))
        marker = event.get("markerRecordedEventAttributes")
        if marker and marker["markerName"] == LOCAL_ACTIVITY_MARKER:
            payload = marker["details"]["data"]["payloads"][0]["data"]  # type: ignore[index]
            found.add((json.loads(base64.b64decode(payload))["activity_type"], Queue.RUN))
    return found


def started_in_histories() -> set[tuple[str, str]]:
    """(workflow type, task queue) of every recorded workflow."""
    found: set[tuple[str, str]] = set()
    for event in recorded_events():
        if started := event.get("workflowExecutionStartedEventAttributes"):
            name: str = started["workflowType"]["name"]  # type: ignore[index]
            found.add((name, started["taskQueue"]["name"]))  # type: ignore[index]
    return found


def activities_the_workflows_call() -> set[str]:
    """The activity names workflows/ imports from harness.engine.contracts: every activity a
    workflow schedules, since workflows call activities by these names only."""
    names: set[str] = set()
    for path in (ROOT / "workflows").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and node.module == contracts.__name__:
                names.update(
                    getattr(contracts, alias.name)
                    for alias in node.names
                    if alias.name.endswith("_ACTIVITY")
                )
    return names


MODEL_QUEUE_ONLY = {contracts.AGENT_TURN_ACTIVITY}
"""Model calls that only ever go to the model queue: no run recorded before that queue
(LLM_QUEUE_PATCH) schedules them, so the run queue need not carry them."""


def test_the_run_queue_carries_exactly_the_activities_the_workflows_call() -> None:
    assert QUEUES[Queue.RUN].activities == activities_the_workflows_call() - MODEL_QUEUE_ONLY
    assert activities_the_workflows_call() >= MODEL_QUEUE_ONLY


def test_every_activity_a_recorded_run_scheduled_is_carried_by_the_queue_it_went_to() -> None:
    scheduled = scheduled_in_histories()
    assert {queue for _, queue in scheduled} == set(Queue)  # both queues are in the histories
    stranded = sorted(
        (name, queue) for name, queue in scheduled if name not in QUEUES[queue].activities
    )
    assert stranded == []


def test_the_model_queue_carries_what_the_recorded_runs_sent_there_and_nothing_else() -> None:
    sent_there = {name for name, queue in scheduled_in_histories() if queue is Queue.LLM}
    assert QUEUES[Queue.LLM].activities == sent_there


def test_no_workflow_is_on_the_model_queue_and_the_run_queue_has_every_recorded_one() -> None:
    started = started_in_histories()
    assert not [queue for _, queue in started if queue.endswith(LLM_QUEUE_SUFFIX)]
    assert QUEUES[Queue.LLM].workflows == ()
    carried = {workflow_name(flow) for flow in QUEUES[Queue.RUN].workflows}
    assert {name for name, _ in started} <= carried
    assert set(WORKFLOWS) == set(QUEUES[Queue.RUN].workflows)


def test_a_queue_is_known_by_its_name_beside_the_run_queue() -> None:
    assert queue_of(RUN_QUEUE, RUN_QUEUE) is Queue.RUN
    assert queue_of(llm_task_queue(RUN_QUEUE), RUN_QUEUE) is Queue.LLM
    assert queue_of(llm_task_queue("elsewhere"), RUN_QUEUE) is None


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryStore]:
    store = open_store(None, tmp_path)
    yield store
    store.close()


@pytest.fixture
async def implementations(memory: MemoryStore) -> dict[str, Activity]:
    """The worker's own activities, built as build_worker builds them; the client is never
    connected (nothing here calls the server)."""
    nowhere = await Client.connect("127.0.0.1:1", lazy=True, plugins=[HarnessPlugin()])
    providers = ProviderRegistry.always(ScriptedProvider())
    return worker_activities(nowhere, RUN_QUEUE, providers, {}, memory, McpHub.from_environment({}))


def registered(plugin: QueuePlugin, task_queue: str) -> tuple[list[str], list[str]]:
    """(workflow names, activity names) the plugin gives a worker of `task_queue`."""
    config = plugin.configure_worker({"task_queue": task_queue})
    flows = [workflow_name(flow) for flow in config.get("workflows", ())]
    names = [activity_name(implementation) or "?" for implementation in config["activities"]]
    return flows, names


def test_the_plugin_gives_each_queue_its_set_from_the_workers_activities(
    implementations: dict[str, Activity],
) -> None:
    plugin = QueuePlugin(RUN_QUEUE, implementations)
    run_flows, run_activities = registered(plugin, RUN_QUEUE)
    assert run_flows == [workflow_name(flow) for flow in QUEUES[Queue.RUN].workflows]
    assert sorted(run_activities) == sorted(QUEUES[Queue.RUN].activities)
    llm_flows, llm_activities = registered(plugin, llm_task_queue(RUN_QUEUE))
    assert llm_flows == []
    assert sorted(llm_activities) == sorted(QUEUES[Queue.LLM].activities)


def test_the_plugin_refuses_a_worker_on_another_queue(
    implementations: dict[str, Activity],
) -> None:
    plugin = QueuePlugin(RUN_QUEUE, implementations)
    with pytest.raises(ValueError, match="not elsewhere"):
        plugin.configure_worker({"task_queue": "elsewhere"})


def test_an_activity_no_implementation_defines_stops_the_worker_before_it_starts(
    implementations: dict[str, Activity],
) -> None:
    without_judge = {n: f for n, f in implementations.items() if n != contracts.JUDGE_ACTIVITY}
    with pytest.raises(ValueError, match=re.escape(contracts.JUDGE_ACTIVITY)):
        QueuePlugin(RUN_QUEUE, without_judge)


@activity.defn(name="harness.on_no_queue")
async def on_no_queue() -> None:
    """An activity that no queue names."""


def test_an_activity_no_queue_carries_stops_the_worker_before_it_starts(
    implementations: dict[str, Activity],
) -> None:
    with pytest.raises(ValueError, match=re.escape("harness.on_no_queue are on no queue")):
        QueuePlugin(RUN_QUEUE, {**implementations, "harness.on_no_queue": on_no_queue})


async def pollers(client: Client, task_queue: str, kind: TaskQueueType.ValueType) -> int:
    described = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=kind,
        )
    )
    return len(described.pollers)


async def test_the_model_queues_worker_polls_for_model_calls_and_no_workflow_task(
    client: Client, task_queue: str, memory: MemoryStore
) -> None:
    model_queue = llm_task_queue(task_queue)
    workflow_tasks = TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
    activity_tasks = TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY
    registry = ProviderRegistry.always(ScriptedProvider())
    async with build_worker(client, task_queue, registry, memory=memory) as worker:
        assert worker.llm_worker.config(active_config=True).get("workflows") == []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
            await pollers(client, task_queue, workflow_tasks)
            and await pollers(client, model_queue, activity_tasks)
        ):
            await asyncio.sleep(0.2)
        assert await pollers(client, task_queue, workflow_tasks) > 0
        assert await pollers(client, model_queue, activity_tasks) > 0
        assert await pollers(client, model_queue, workflow_tasks) == 0
