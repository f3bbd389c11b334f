"""Cancelling a run by the `cancel` signal, whenever it arrives."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType, PendingActivityState
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle

from activities.llm import ScriptedProvider
from durable_harness._client.run_results import result_of
from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.core.errors import ErrorCode
from harness.engine.contracts import CANCEL_SIGNAL
from harness.engine.dag import NodeStatus
from harness.engine.faults import FaultSpec
from harness.engine.messages import PlanRequest, PlanResponse
from harness.engine.run import RunPhase, RunRequest, RunResult, ScaleOptions
from harness.waits.deliveries import CancelRequest
from scenarios.base import Pack
from tests.factories import approval_request, collect, delay, node, synthetic_plan
from tests.support import history_events, pending_wait, running_worker, start_run
from tests.workflows.test_agent_run import THREE_CITIES
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


# -- whatever the nodes are doing, a cancel ends the run Canceled ------------------------------


class CancelWay(Enum):
    TEMPORAL = "temporal"  # `harness cancel`, `temporal workflow cancel`, handle.cancel()
    SIGNAL = "signal"  # the `cancel` signal (CancelRequest) alone


class StallingProvider:
    """The offline provider, except that planning or judging (as asked) hangs until the
    activity is cancelled; `entered` is set once it hangs."""

    name = "stalling"

    def __init__(self, *, plan: bool = False, judge: bool = False) -> None:
        self._scripted = ScriptedProvider()
        self._stall_plan, self._stall_judge = plan, judge
        self.entered = asyncio.Event()

    async def _stall(self) -> None:
        self.entered.set()
        await asyncio.sleep(600)

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        if self._stall_plan:
            await self._stall()
        return await self._scripted.plan(request, scenario)

    async def write(self, request: TextRequest) -> TextReply:
        return await self._scripted.write(request)

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        if self._stall_judge:
            await self._stall()
        return await self._scripted.judge(request)

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        return await self._scripted.agent_turn(request)


Handle = WorkflowHandle[Any, Any]


@dataclass(frozen=True)
class Situation:
    """What the run is doing when the cancel arrives, and how the test knows it is doing it."""

    name: str
    request: Callable[[], RunRequest]
    reached: Callable[[Handle, StallingProvider], Awaitable[None]]
    provider: Callable[[], StallingProvider] = StallingProvider


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    for _ in range(1200):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the run never reached: {what}")


async def _in_backoff(handle: Handle, _: StallingProvider) -> None:
    """A tool call failed and waits out its retry backoff (Temporal's own retry)."""

    async def backing_off() -> bool:
        pending = (await handle.describe()).raw_description.pending_activities
        return any(
            activity.attempt >= 2
            and activity.state == PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
            for activity in pending
        )

    await _until(backing_off, "a tool call in its retry backoff")


def _waiting_for(wait_id: str) -> Callable[[Handle, StallingProvider], Awaitable[None]]:
    async def reached(handle: Handle, _: StallingProvider) -> None:
        await pending_wait(handle, wait_id)

    return reached


async def _child_batches_running(handle: Handle, _: StallingProvider) -> None:
    async def children_started() -> bool:
        events = (await handle.fetch_history()).events
        started = EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED
        return any(event.event_type == started for event in events)

    await _until(children_started, "a child batch under way")


async def _in_backoff_in_child(handle: Handle, provider: StallingProvider) -> None:
    """A child batch's tool call waits out its retry backoff."""
    await _child_batches_running(handle, provider)
    events = (await handle.fetch_history()).events
    initiated = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    children = [
        event.start_child_workflow_execution_initiated_event_attributes.workflow_id
        for event in events
        if event.event_type == initiated
    ]
    client = handle._client
    first = client.get_workflow_handle(children[0])
    await _in_backoff(first, provider)


async def _provider_stalled(_: Handle, provider: StallingProvider) -> None:
    await asyncio.wait_for(provider.entered.wait(), timeout=60)


def _retrying() -> RunRequest:
    plan = synthetic_plan(delay("flaky", 600_000), collect("final", ["flaky"]))
    fault = FaultSpec(tool="delay", code=ErrorCode.RATE_LIMITED, times=2)
    return RunRequest(goal="retrying", scenario="synthetic", plan=plan, faults=[fault])


def _planned_retrying() -> RunRequest:
    """The report's case: a planned cities run, one of its tools failing RATE_LIMITED."""
    fault = FaultSpec(
        tool="get_population", argument_value="Tokyo", code=ErrorCode.RATE_LIMITED, times=2
    )
    return RunRequest(goal=THREE_CITIES, faults=[fault])


def _cheap_retrying() -> RunRequest:
    """Twenty cheap calls, two at a time in groups; each fails in its group and once more on
    its own, then succeeds after a backoff: about a second a pair, so the run is in the middle
    of them for long enough to be caught there."""
    cheap = [node(f"e{i}", "echo", value=i) for i in range(20)]
    plan = synthetic_plan(*cheap, collect("final", [n.id for n in cheap]))
    fault = FaultSpec(tool="echo", code=ErrorCode.RATE_LIMITED, times=2)
    return RunRequest(
        goal="cheap", scenario="synthetic", plan=plan, faults=[fault], max_concurrency=2
    )


async def _cheap_calls_under_way(handle: Handle, _: StallingProvider) -> None:
    async def half_way() -> bool:
        nodes = (await handle.query(AgentRunWorkflow.status)).nodes
        return any(node.status is NodeStatus.DONE for node in nodes) and any(
            node.status is NodeStatus.RUNNING for node in nodes
        )

    await _until(half_way, "cheap calls done and others under way")


def _async_result() -> RunRequest:
    plan = synthetic_plan(node("job", "start_job", job="slow"), collect("final", ["job"]))
    return RunRequest(goal="async", scenario="synthetic", plan=plan)


def _wide() -> RunRequest:
    slow = [delay(f"n{i}", 600_000) for i in range(12)]
    plan = synthetic_plan(*slow, collect("final", [n.id for n in slow]))
    scale = ScaleOptions(batch_plan_nodes=10, batch_min_ready=5, batch_size=5)
    return RunRequest(goal="wide", scenario="synthetic", plan=plan, scale=scale)


def _wide_retrying() -> RunRequest:
    request = _wide()
    fault = FaultSpec(tool="delay", code=ErrorCode.RATE_LIMITED, times=2)
    return request.model_copy(update={"faults": [fault]})


def _verifying() -> RunRequest:
    plan = synthetic_plan(delay("quick", 1), collect("final", ["quick"]))
    return RunRequest(goal="verify me", scenario="synthetic", plan=plan)


SITUATIONS = [
    Situation("a node retrying a fault", _retrying, _in_backoff),
    Situation("a planned run's node retrying a fault", _planned_retrying, _in_backoff),
    Situation("cheap grouped calls retrying", _cheap_retrying, _cheap_calls_under_way),
    Situation("a node waiting for approval", approval_request, _waiting_for("approve-change")),
    Situation("a node waiting for an async result", _async_result, _waiting_for("op-job")),
    Situation("nodes in child batches", _wide, _child_batches_running),
    Situation("nodes retrying in child batches", _wide_retrying, _in_backoff_in_child),
    Situation(
        "planning",
        lambda: RunRequest(goal=THREE_CITIES),
        _provider_stalled,
        lambda: StallingProvider(plan=True),
    ),
    Situation("verifying", _verifying, _provider_stalled, lambda: StallingProvider(judge=True)),
]


@pytest.mark.parametrize("way", list(CancelWay), ids=lambda way: way.value)
@pytest.mark.parametrize("situation", SITUATIONS, ids=lambda situation: situation.name)
async def test_a_cancel_ends_the_run_canceled_whatever_it_is_doing(
    client: Client, task_queue: str, situation: Situation, way: CancelWay
) -> None:
    provider = situation.provider()
    async with running_worker(client, task_queue, provider=provider):
        handle = await start_run(client, task_queue, situation.request())
        await situation.reached(handle, provider)
        if way is CancelWay.TEMPORAL:
            await handle.cancel(reason="enough (by human:ops)")
        else:
            await handle.signal(CANCEL_SIGNAL, CancelRequest(reason="enough", actor="human:ops"))
        result: RunResult = await result_of(client, handle)
        description = await handle.describe()
    assert result.status is RunPhase.CANCELLED, (result.status, result.error)
    assert result.error == "cancelled: enough (by human:ops)"
    assert description.status is WorkflowExecutionStatus.CANCELED
    assert not [n.id for n in result.nodes if n.status is NodeStatus.FAILED]
