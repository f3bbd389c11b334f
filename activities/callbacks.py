"""Callbacks that carry an external system's result to its run, as the workflow's `deliver`
signal: the same way any external system would deliver it."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import JsonValue
from temporalio.client import Client, WorkflowHandle

from harness.contracts import DELIVER_SIGNAL, WAITS_QUERY
from harness.deliveries import DeliverRequest
from harness.wait_book import Wait
from scenarios.base import DeliverResult

READY_POLL_SECONDS = 0.1


def signal_delivery(
    client: Client, *, actor: str = "system:payments", ready_timeout: float = 30.0
) -> DeliverResult:
    """A callback that delivers an operation's outcome to its run (workflow id = run id)."""

    async def deliver(run_id: str, operation_id: str, outcome: JsonValue) -> None:
        handle = client.get_workflow_handle(run_id)
        await _until_waiting_for(handle, operation_id, ready_timeout)
        request = DeliverRequest(operation_id=operation_id, data=outcome, actor=actor)
        await handle.signal(DELIVER_SIGNAL, request)

    return deliver


async def _until_waiting_for(
    handle: WorkflowHandle[Any, Any], operation_id: str, timeout: float
) -> None:
    """The run opens its wait for an operation only after the tool has returned the operation
    id, and a delivery that arrives before the wait exists is refused. An operation can finish
    faster than that, so hold the delivery (bounded) until the run is listening for it; after
    the timeout it is sent anyway, and a refusal is recorded in the run's trace."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        waits: list[Wait] = await handle.query(WAITS_QUERY, result_type=list[Wait])
        if any(wait.operation_id == operation_id for wait in waits):
            return
        await asyncio.sleep(READY_POLL_SECONDS)
