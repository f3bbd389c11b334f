"""A scope's task graph decides which tasks are ready by their statuses. Tasks tell their scope
of a new status by the `task_status` signal, which anyone who can reach the namespace may send:
the graph takes the status the task's own workflow holds, never the one the signal says."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from durable_harness._client import tasks
from harness.engine.contracts import (
    SCOPE_TASK_STATUS_ACTIVITY,
    TASK_STATUS_SIGNAL,
    scope_workflow_id,
)
from harness.governance.task_commands import SetStatus, TaskCommand
from harness.governance.task_graph import CreateTask, GraphCommand, StatusChanged
from harness.governance.work import TaskStatus
from tests.support import history_events, running_worker

pytestmark = pytest.mark.requires_local_server("tasks are listed by the HarnessTask* attributes")

DEADLINE_SECONDS = 120


async def _reads_done(client: Client, scope: str) -> int:
    events = await history_events(client, scope_workflow_id(scope))
    scheduled = {
        event.event_id
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.activity_task_scheduled_event_attributes.activity_type.name
        == SCOPE_TASK_STATUS_ACTIVITY
    }
    return sum(
        1
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
        and event.activity_task_completed_event_attributes.scheduled_event_id in scheduled
    )


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    for _ in range(DEADLINE_SECONDS * 10):
        if await check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"not within {DEADLINE_SECONDS} s: {what}")


async def _status_in_graph(client: Client, scope: str, task_id: str) -> TaskStatus:
    return (await tasks.graph(client, scope)).tasks[task_id].status


async def test_a_forged_task_status_signal_cannot_mark_a_task_done_in_its_graph(
    client: Client, task_queue: str
) -> None:
    scope = f"forge-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        created = await tasks.scope_command(
            client,
            task_queue,
            GraphCommand(scope=scope, actor="human:host", operation=CreateTask(title="refund")),
        )
        assert created.accepted and created.id, created.reason
        task_id = created.id
        before = await _status_in_graph(client, scope, task_id)
        forged = GraphCommand(
            scope=scope,
            actor="system:harness",
            operation=StatusChanged(task_id=task_id, status=TaskStatus.DONE),
        )
        await client.get_workflow_handle(scope_workflow_id(scope)).signal(
            TASK_STATUS_SIGNAL, forged
        )

        async def forged_read() -> bool:
            return await _reads_done(client, scope) >= 1

        await _until(forged_read, "the scope read the task's status after the forged signal")
        assert before is not TaskStatus.DONE
        assert await _status_in_graph(client, scope, task_id) is before

        cancel = TaskCommand(
            task_id=task_id,
            actor="human:host",
            operation=SetStatus(status=TaskStatus.CANCELLED, reason="not needed"),
        )
        assert (await tasks.task_command(client, scope, cancel)).accepted

        async def cancelled() -> bool:
            return await _status_in_graph(client, scope, task_id) is TaskStatus.CANCELLED

        await _until(cancelled, "the task's own change reached its graph")
