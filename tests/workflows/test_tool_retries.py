"""Every attempt of a tool call counts against the run's tool-call budget, and each tool's own
attempts, timeout and backoff reach its activity's retry policy."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from durable_harness._client.run_results import result_of
from harness.core.errors import ErrorCode
from harness.core.plan import Plan
from harness.engine.budget import BudgetLimits
from harness.engine.dag import NodeStatus
from harness.engine.faults import FaultSpec
from harness.engine.run import RunPhase, RunRequest, RunResult, RunStatus, ScaleOptions
from harness.waits.deliveries import DeliverRequest
from tests.factories import collect, delay, node, synthetic_plan
from tests.support import (
    deliver_update,
    execute_run,
    history_events,
    node_of,
    pending_wait,
    running_worker,
    start_run,
)
from workflows import AgentRunWorkflow

RUN_TOOL = "harness.run_tool"


def _six_leaves() -> Plan:
    leaves = [delay(f"d{i}", 10) for i in range(1, 7)]
    return synthetic_plan(*leaves, collect("final", [leaf.id for leaf in leaves]))


def _twice_rate_limited(value: str) -> FaultSpec:
    return FaultSpec(tool="delay", argument_value=value, code=ErrorCode.RATE_LIMITED, times=2)


def tool_attempts(events: list[HistoryEvent]) -> int:
    """The attempts of every tool call in one history: each call's last attempt number, which
    Temporal records when the call ends (its retries leave no events of their own)."""
    tool_calls = {
        event.event_id
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.activity_task_scheduled_event_attributes.activity_type.name == RUN_TOOL
    }
    return sum(
        event.activity_task_started_event_attributes.attempt
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
        and event.activity_task_started_event_attributes.scheduled_event_id in tool_calls
    )


def scheduled_calls(events: list[HistoryEvent]) -> dict[str, HistoryEvent]:
    """Each tool call's ActivityTaskScheduled event, by the node id its summary names."""
    return {
        node_of(event.user_metadata.summary.data.decode().strip('"')): event
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.activity_task_scheduled_event_attributes.activity_type.name == RUN_TOOL
    }


async def test_retries_count_against_the_tool_call_budget(client: Client, task_queue: str) -> None:
    request = RunRequest(
        goal="six leaves, the first rate-limited twice",
        scenario="synthetic",
        plan=_six_leaves(),
        limits=BudgetLimits(max_tool_calls=6),
        faults=[_twice_rate_limited("d1")],
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    made = tool_attempts(await history_events(client, result.run_id))
    assert made <= 6
    assert result.budget.usage.tool_calls == made == sum(n.attempts for n in result.nodes)
    nodes = {n.id: n for n in result.nodes}
    assert (nodes["d1"].status, nodes["d1"].attempts) == (NodeStatus.DONE, 3)
    assert result.status is RunPhase.BUDGET_EXHAUSTED
    assert {n.error_message for n in result.nodes if n.status is NodeStatus.SKIPPED} == {
        "budget exhausted"
    }


async def test_calls_waiting_for_reserved_attempts_run_when_those_are_given_back(
    client: Client, task_queue: str
) -> None:
    """Six calls of three attempts each under a limit of seven: all but two wait for
    reservations, yet each uses one attempt, so all seven calls run and the run succeeds."""
    request = RunRequest(
        goal="six leaves and a report under seven calls",
        scenario="synthetic",
        plan=_six_leaves(),
        limits=BudgetLimits(max_tool_calls=7),
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    assert result.budget.usage.tool_calls == 7
    assert tool_attempts(await history_events(client, result.run_id)) == 7


async def test_a_tools_own_attempts_timeout_and_backoff_reach_its_retry_policy(
    client: Client, task_queue: str
) -> None:
    """`flaky` asks for 5 attempts of 20 s, the first retry after 0.5 s: it succeeds on its
    fifth attempt, where the house's three would have failed it."""
    plan = synthetic_plan(
        node("f", "flaky", ms=1, value="f"), delay("plain", 1), collect("final", ["f", "plain"])
    )
    request = RunRequest(
        goal="a flaky service",
        scenario="synthetic",
        plan=plan,
        faults=[FaultSpec(tool="flaky", code=ErrorCode.RATE_LIMITED, times=4)],
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    assert {n.id: n.attempts for n in result.nodes}["f"] == 5
    calls = scheduled_calls(await history_events(client, result.run_id))
    flaky = calls["f"].activity_task_scheduled_event_attributes
    assert flaky.retry_policy.maximum_attempts == 5
    assert flaky.start_to_close_timeout.ToTimedelta() == timedelta(seconds=20)
    assert flaky.retry_policy.initial_interval.ToTimedelta() == timedelta(seconds=0.5)
    plain = calls["plain"].activity_task_scheduled_event_attributes
    assert plain.retry_policy.maximum_attempts == 3
    assert plain.start_to_close_timeout.ToTimedelta() == timedelta(minutes=2)
    assert plain.retry_policy.initial_interval.ToTimedelta() == timedelta(seconds=1)


async def test_a_call_reserves_no_more_attempts_than_the_budget_has_left(
    client: Client, task_queue: str
) -> None:
    """`flaky` wants 5 attempts; a budget of 4 calls gives it 4, and it fails on the fourth."""
    plan = synthetic_plan(node("f", "flaky", ms=1, value="f"), collect("final", ["f"]))
    request = RunRequest(
        goal="a flaky service on a small budget",
        scenario="synthetic",
        plan=plan,
        limits=BudgetLimits(max_tool_calls=4),
        faults=[FaultSpec(tool="flaky", code=ErrorCode.RATE_LIMITED, times=4)],
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    events = await history_events(client, result.run_id)
    retry = scheduled_calls(events)["f"].activity_task_scheduled_event_attributes.retry_policy
    assert retry.maximum_attempts == 4
    nodes = {n.id: n for n in result.nodes}
    assert (nodes["f"].status, nodes["f"].attempts) == (NodeStatus.FAILED, 4)
    assert result.budget.usage.tool_calls == tool_attempts(events) == 4


async def test_child_batches_share_the_tool_call_budget_retries_included(
    client: Client, task_queue: str
) -> None:
    leaves = [delay(f"n{i}", 10) for i in range(12)]
    plan = synthetic_plan(*leaves, collect("final", [leaf.id for leaf in leaves]))
    request = RunRequest(
        goal="a wide plan in batches, two calls rate-limited twice",
        scenario="synthetic",
        plan=plan,
        limits=BudgetLimits(max_tool_calls=10),
        faults=[_twice_rate_limited("n0"), _twice_rate_limited("n5")],
        scale=ScaleOptions(batch_plan_nodes=5, batch_min_ready=3, batch_size=4),
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    events = await history_events(client, result.run_id)
    children = [
        event.child_workflow_execution_started_event_attributes.workflow_execution.workflow_id
        for event in events
        if event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED
    ]
    assert children, "the plan ran in child batches"
    made = tool_attempts(events) + sum(
        [tool_attempts(await history_events(client, child)) for child in children]
    )
    assert made <= 10
    assert result.budget.usage.tool_calls == made == sum(n.attempts for n in result.nodes)
    assert _status(result, "n0") is NodeStatus.DONE


async def test_attempts_a_call_gives_back_before_its_operation_ends_let_waiting_nodes_run(
    client: Client, task_queue: str
) -> None:
    """`job` reserves all 3 calls; its call makes 1 and then waits for the operation's
    result. The 2 it gave back let `work` run meanwhile, not after the delivery."""
    plan = synthetic_plan(
        node("job", "start_job", job="slow"), delay("work", 1), collect("final", ["job", "work"])
    )
    request = RunRequest(
        goal="an operation and a node that waits for calls",
        scenario="synthetic",
        plan=plan,
        limits=BudgetLimits(max_tool_calls=3),
    )
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request)
        operation = await pending_wait(handle, "op-job")
        work = NodeStatus.PENDING
        for _ in range(600):  # up to 30 s
            status: RunStatus = await handle.query(AgentRunWorkflow.status)
            work = next(n.status for n in status.nodes if n.id == "work")
            if work is NodeStatus.DONE:
                break
            await asyncio.sleep(0.05)
        assert work is NodeStatus.DONE
        delivery = DeliverRequest(operation_id=operation.operation_id, data={"ok": True})
        assert (await deliver_update(handle, "deliver_sync", delivery)).accepted
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.SUCCEEDED
    assert result.budget.usage.tool_calls == 3


def _status(result: RunResult, node_id: str) -> NodeStatus:
    return next(n.status for n in result.nodes if n.id == node_id)
