"""A worker killed with SIGKILL at any point of a refund, with one worker (restarted) and with two
(the other takes over), and then a second run for the same order, which reports the refund
already paid: the payment service's ledger holds exactly one payment every time.

Workers are `python -m worker` processes; the payment service is `python -m payments`; nothing
is faked. Killing a worker mid-call costs the activity's heartbeat timeout (30 s) before the
retry, so these tests are slow by nature."""

from __future__ import annotations

import asyncio
import uuid
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from durable_harness._client.run_results import result_of
from harness.engine.contracts import APPROVE_SIGNAL
from harness.engine.run import RunPhase, RunRequest, RunResult
from harness.waits.deliveries import ApprovalRequest
from harness.waits.wait_book import WaitStatus
from tests.payment_service import PaymentService, payment_service
from tests.support import history_events
from tests.worker_processes import workers
from workflows import AgentRunWorkflow

pytestmark = [
    pytest.mark.requires_local_server("worker processes and the service run in real time"),
    pytest.mark.timeout(240),
    pytest.mark.waits_out_timeouts,
]

GOAL = "Refund order A-1001, the customer received a damaged item"
SECONDS = 120.0
HOLD_RESPONSE_SECONDS = 3.0
SETTLE_SECONDS = 4.0


class Point(StrEnum):
    BEFORE_THE_CALL = "before the call"
    """Approval pending: nothing has been asked of the service."""
    DURING_THE_CALL = "during the call"
    """The service has paid; its answer has not reached the worker."""
    BEFORE_THE_CALLBACK = "before the callback"
    """The run waits for the outcome; the service has not reported it."""
    AFTER_THE_CALLBACK = "after the callback"
    """The outcome is in; the report is still to write."""


async def eventually(check: Any, what: str) -> None:
    for _ in range(int(SECONDS / 0.1)):
        if await check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never saw {what}")


async def wait_status(handle: WorkflowHandle[Any, Any], wait_id: str) -> WaitStatus | None:
    waits = await handle.query(AgentRunWorkflow.waits)
    return next((w.status for w in waits if w.id == wait_id), None)


async def workflow_owner(client: Client, run_id: str) -> str:
    """The worker that completed the run's latest workflow task (the one caching it)."""
    events = await history_events(client, run_id)
    completed = [
        e.workflow_task_completed_event_attributes.identity
        for e in events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    ]
    return completed[-1]


async def refund_caller(handle: WorkflowHandle[Any, Any]) -> str | None:
    """The worker running the refund's activity right now."""
    description = await handle.describe()
    for pending in description.raw_description.pending_activities:
        if pending.activity_type.name == "harness.run_tool" and pending.last_worker_identity:
            return pending.last_worker_identity
    return None


async def start_refund(client: Client, task_queue: str) -> WorkflowHandle[Any, Any]:
    return await client.start_workflow(
        AgentRunWorkflow.run,
        RunRequest(goal=GOAL, scenario="refunds"),
        id=f"refund-{uuid.uuid4().hex[:10]}",
        task_queue=task_queue,
    )


async def approve(handle: WorkflowHandle[Any, Any]) -> None:
    """By signal: it needs no worker to be accepted, so it works while none is alive."""
    await handle.signal(
        APPROVE_SIGNAL, ApprovalRequest(wait_id="approve-refund", actor="human:ops")
    )


CRASHES = [
    (Point.BEFORE_THE_CALL, 1),
    (Point.DURING_THE_CALL, 2),
    (Point.BEFORE_THE_CALLBACK, 1),
    (Point.AFTER_THE_CALLBACK, 2),
]
"""Every point once, and each way of going on (restarted, taken over) at two of them. Which
process goes on changes nothing the harness does: the run's state comes back from its history
and the payment's idempotency key from its run and node ids, whoever asks. The one worker is at
BEFORE_THE_CALL, where the approval arrives while no worker is alive, and BEFORE_THE_CALLBACK,
where the outcome may; the second worker takes over DURING_THE_CALL, retrying the payment a
live process made, and AFTER_THE_CALLBACK. (Every point with both counts, 8 tests, cost CI about
five minutes; these 4 about half.)"""
WORKERS = {1: "one-worker", 2: "two-workers"}


@pytest.mark.parametrize(
    ("point", "worker_count"),
    [
        pytest.param(point, count, id=f"{point.name.lower()}-{WORKERS[count]}")
        for point, count in CRASHES
    ],
)
async def test_a_worker_killed_at_any_point_of_a_refund_pays_exactly_once(
    client: Client, task_queue: str, tmp_path: Path, point: Point, worker_count: int
) -> None:
    hold = HOLD_RESPONSE_SECONDS if point is Point.DURING_THE_CALL else 0.0
    async with (
        payment_service(
            client, tmp_path, settle_seconds=SETTLE_SECONDS, hold_response_seconds=hold
        ) as service,
        workers(client, task_queue, service, tmp_path / "workers.log") as pool,
    ):
        # started side by side: each imports for seconds, and neither waits for the other
        await asyncio.gather(*(pool.start() for _ in range(worker_count)))
        handle = await start_refund(client, task_queue)

        async def approval_pending() -> bool:
            return await wait_status(handle, "approve-refund") is WaitStatus.PENDING

        await eventually(approval_pending, "the approval wait")
        if point is Point.BEFORE_THE_CALL:
            pool.kill(await workflow_owner(client, handle.id))
            await approve(handle)
        else:
            await approve(handle)
            victim = await _at(point, client, handle, service)
            pool.kill(victim)
        if not pool.processes:
            await pool.start()
        result: RunResult = await asyncio.wait_for(result_of(client, handle), timeout=SECONDS)
        second: RunResult = await asyncio.wait_for(
            result_of(client, await start_refund(client, task_queue)), timeout=SECONDS
        )
        payments = await service.payments("A-1001")
    assert result.status is RunPhase.SUCCEEDED, (point, result.error)
    assert [p.idempotency_key for p in payments] == [
        service.client.idempotency_key(handle.id, "refund")
    ]
    assert second.status is RunPhase.SUCCEEDED  # it reports the refund paid, and pays nothing
    assert [n.tool for n in second.nodes if n.id == "refund"] == ["find_refund"]
    assert result.report is not None and payments[0].operation_id in result.report


async def _at(
    point: Point, client: Client, handle: WorkflowHandle[Any, Any], service: PaymentService
) -> str:
    """Wait for `point` and name the worker to kill there."""
    if point is Point.DURING_THE_CALL:

        async def paid() -> bool:
            return bool(await service.payments()) and await refund_caller(handle) is not None

        await eventually(paid, "the payment with its call still open")
        caller = await refund_caller(handle)
        assert caller is not None
        return caller
    if point is Point.BEFORE_THE_CALLBACK:

        async def waiting() -> bool:
            return await wait_status(handle, "op-refund") is WaitStatus.PENDING

        await eventually(waiting, "the wait for the payment's outcome")
    else:

        async def delivered() -> bool:
            return await wait_status(handle, "op-refund") is WaitStatus.DELIVERED

        await eventually(delivered, "the payment's outcome delivered")
    return await workflow_owner(client, handle.id)


def test_the_crashes_kill_at_every_point_and_with_one_and_two_workers() -> None:
    assert {point for point, _ in CRASHES} == set(Point)
    assert sorted({count for _, count in CRASHES}) == [1, 2]
