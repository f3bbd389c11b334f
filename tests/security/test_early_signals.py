"""A signal sent with a run's start reaches it before the run has decided its rules: it waits
for them, so a keyed run's rules hold from its very first signal (EARLY_SIGNALS_PATCH)."""

from __future__ import annotations

import uuid

from temporalio.client import Client

from durable_harness._client.run_results import result_of
from harness.engine.run import RunPhase, RunRequest, RunResult
from harness.engine.trace import TraceKind
from harness.waits.deliveries import ApprovalRequest, CancelRequest
from harness.waits.signatures import signed_message
from infra.signing import new_private_key, public_key, sign
from tests.factories import collect, node, synthetic_plan
from tests.support import pending_wait, running_worker
from workflows import AgentRunWorkflow

OPS = new_private_key()


def keyed_request() -> RunRequest:
    plan = synthetic_plan(
        node("change", "side_effect", target="prod"), collect("final", ["change"])
    )
    return RunRequest(
        goal="change prod",
        scenario="synthetic",
        plan=plan,
        actor_keys={"human:ops": public_key(OPS)},
    )


async def test_an_unsigned_cancel_sent_with_the_start_by_a_respelt_keyed_actor_is_refused(
    client: Client, task_queue: str
) -> None:
    cancel = CancelRequest(reason="stop it", actor="Human:Ops")
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            AgentRunWorkflow.run,
            keyed_request(),
            id=f"test-{uuid.uuid4().hex[:10]}",
            task_queue=task_queue,
            start_signal="cancel",
            start_signal_args=[cancel],
        )
        await pending_wait(handle, "approve-change")
        approval = ApprovalRequest(wait_id="approve-change", actor="human:ops")
        signature = sign(OPS, signed_message(handle.id, approval))
        await handle.signal("approve", approval.model_copy(update={"signature": signature}))
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.SUCCEEDED, result.error
    refusals = [e.message or "" for e in result.trace if e.kind is TraceKind.WAIT_REJECT]
    assert any(m.startswith("Human:Ops: human:ops has a key") for m in refusals), refusals


async def test_a_signed_cancel_sent_with_the_start_ends_the_run_canceled(
    client: Client, task_queue: str
) -> None:
    run_id = f"test-{uuid.uuid4().hex[:10]}"
    cancel = CancelRequest(reason="stop it", actor="Human:Ops")
    signed = cancel.model_copy(update={"signature": sign(OPS, signed_message(run_id, cancel))})
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            AgentRunWorkflow.run,
            keyed_request(),
            id=run_id,
            task_queue=task_queue,
            start_signal="cancel",
            start_signal_args=[signed],
        )
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.CANCELLED, result.error
    assert "stop it (by Human:Ops)" in (result.error or "")
