"""No signal can wedge a run: whatever arrives is applied or refused with a reason in the trace,
and a later valid delivery still completes the run."""

from __future__ import annotations

from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowHandle
from temporalio.common import RawValue

from durable_harness._client.run_results import result_of
from harness.engine.contracts import APPROVE_SIGNAL, CANCEL_SIGNAL
from harness.engine.run import RunPhase, RunResult
from harness.engine.trace import TraceEvent, TraceKind
from tests.factories import approval_request
from tests.support import pending_wait, running_worker, signal_by_cli, start_run

APPROVE = {"wait_id": "approve-change", "decision": "approve", "actor": "human:ops"}


def _refusals(result: RunResult) -> list[TraceEvent]:
    return [
        event
        for event in result.trace
        if event.kind is TraceKind.WAIT_REJECT and "signal" in event.data
    ]


async def _refused_then_approved(
    client: Client, task_queue: str, send: Any
) -> tuple[RunResult, list[TraceEvent]]:
    async with running_worker(client, task_queue):
        handle: WorkflowHandle[Any, Any] = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        await send(handle)
        await handle.signal(APPROVE_SIGNAL, APPROVE)
        result: RunResult = await result_of(client, handle)
    return result, _refusals(result)


async def test_an_approve_signal_without_a_payload_is_refused_and_a_later_one_completes_the_run(
    client: Client, task_queue: str
) -> None:
    async def send(handle: WorkflowHandle[Any, Any]) -> None:
        await signal_by_cli(client, handle.id, APPROVE_SIGNAL)

    result, refusals = await _refused_then_approved(client, task_queue, send)
    assert result.status is RunPhase.SUCCEEDED
    assert [event.message for event in refusals] == [
        "signal 'approve' needs exactly one ApprovalRequest payload; it had 0"
    ]


async def test_a_signal_with_two_payloads_is_refused(client: Client, task_queue: str) -> None:
    async def send(handle: WorkflowHandle[Any, Any]) -> None:
        await signal_by_cli(client, handle.id, APPROVE_SIGNAL, '{"a": 1}', '{"b": 2}')

    result, refusals = await _refused_then_approved(client, task_queue, send)
    assert result.status is RunPhase.SUCCEEDED
    assert refusals[0].data == {"signal": "approve", "payloads": 2}


async def test_a_malformed_payload_is_refused_with_what_is_wrong(
    client: Client, task_queue: str
) -> None:
    async def send(handle: WorkflowHandle[Any, Any]) -> None:
        await handle.signal(APPROVE_SIGNAL, {"wait_id": ["not", "text"], "decision": "maybe"})
        not_json = Payload(metadata={"encoding": b"json/plain"}, data=b"not json at all")
        await handle.signal(APPROVE_SIGNAL, RawValue(not_json))
        await handle.signal(APPROVE_SIGNAL, None)

    result, refusals = await _refused_then_approved(client, task_queue, send)
    assert result.status is RunPhase.SUCCEEDED
    shape, not_json, null = (event.message or "" for event in refusals)
    assert shape.startswith(
        "signal 'approve': the payload is not a valid ApprovalRequest: wait_id:"
    )
    assert "decision" in shape and "actor" in shape
    assert not_json.startswith("signal 'approve': the payload is not a valid ApprovalRequest:")
    assert null == "signal 'approve': the payload is NoneType, not a ApprovalRequest"


async def test_an_unknown_signal_is_refused_and_names_the_signals_the_run_takes(
    client: Client, task_queue: str
) -> None:
    async def send(handle: WorkflowHandle[Any, Any]) -> None:
        await handle.signal("aprove", APPROVE)

    result, refusals = await _refused_then_approved(client, task_queue, send)
    assert result.status is RunPhase.SUCCEEDED
    assert refusals[0].message == (
        "this run has no signal 'aprove'; it takes answer, approve, cancel, deliver"
    )


async def test_a_bare_cancel_signal_cancels_with_the_default_reason(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        await signal_by_cli(client, handle.id, CANCEL_SIGNAL)
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.CANCELLED
    assert result.error == "cancelled: cancelled (by human:user)"
    assert _refusals(result) == []


async def test_a_megabyte_rejection_comment_is_refused_and_the_run_still_finishes(
    client: Client, task_queue: str
) -> None:
    async def send(handle: WorkflowHandle[Any, Any]) -> None:
        huge = {**APPROVE, "decision": "reject", "comment": "x" * 1_000_000}
        await handle.signal(APPROVE_SIGNAL, huge)

    result, refusals = await _refused_then_approved(client, task_queue, send)
    assert result.status is RunPhase.SUCCEEDED
    assert refusals[0].message == (
        "signal 'approve' is out of range: comment: at most 2000 characters, not 1000000"
    )
