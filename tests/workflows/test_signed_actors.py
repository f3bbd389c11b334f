"""Signed actors on the dev server: a run started with actor keys refuses a forged approval (by
the `temporal` CLI's signal and by update) and traces the refusal, and takes the approval that
`harness approve --key` signs; a signed payment service's outcome is taken, a forged one is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError

from durable_harness._client.run_results import result_of
from harness.engine.run import RunPhase, RunRequest, RunResult
from harness.engine.trace import TraceKind
from harness.waits.deliveries import ApprovalRequest, DeliverRequest
from infra.signing import new_private_key, public_key
from tests.factories import collect, node, synthetic_plan
from tests.starter.test_cli import harness
from tests.support import pending_wait, running_worker, signal_by_cli, start_run
from workflows import AgentRunWorkflow

pytestmark = pytest.mark.requires_local_server("the harness and temporal CLIs run in real time")


def keys_on_disk(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    ops, mallory = new_private_key(), new_private_key()
    ops_file, mallory_file = tmp_path / "ops.key", tmp_path / "mallory.key"
    ops_file.write_text(ops)
    mallory_file.write_text(mallory)
    return ops_file, mallory_file, {"human:ops": public_key(ops)}


def approval_run(keys: dict[str, str]) -> RunRequest:
    plan = synthetic_plan(
        node("change", "side_effect", target="prod"), collect("final", ["change"])
    )
    return RunRequest(goal="change prod", scenario="synthetic", plan=plan, actor_keys=keys)


async def test_a_forged_approval_is_refused_and_a_signed_one_is_taken(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    ops_key, mallory_key, keys = keys_on_disk(tmp_path)
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request=approval_run(keys))
        await pending_wait(handle, "approve-change")
        unsigned = json.dumps({"wait_id": "approve-change", "actor": "human:ops"})
        await signal_by_cli(client, handle.id, "approve", unsigned)
        with pytest.raises(WorkflowUpdateFailedError) as refused_update:
            await handle.execute_update(
                AgentRunWorkflow.approve_sync,
                ApprovalRequest(wait_id="approve-change", actor="human:mallory"),
            )
        wrong_key = await harness(
            "approve", handle.id, "approve-change", "--actor", "human:ops",
            "--key", str(mallory_key), client=client, task_queue=task_queue,
        )  # fmt: skip
        still = await pending_wait(handle, "approve-change")
        signed = await harness(
            "approve", handle.id, "approve-change", "--actor", "human:ops",
            "--key", str(ops_key), client=client, task_queue=task_queue,
        )  # fmt: skip
        result: RunResult = await result_of(client, handle)
    assert "has no key in this run" in str(refused_update.value.cause)
    assert wrong_key[0] == 1 and "is not human:ops's for this delivery" in wrong_key[2]
    assert still.status.value == "PENDING"
    assert signed[0] == 0 and signed[1].startswith("accepted"), signed
    assert result.status is RunPhase.SUCCEEDED, result.error
    refusals = [e.message or "" for e in result.trace if e.kind is TraceKind.WAIT_REJECT]
    assert any("human:ops has a key in this run" in m for m in refusals), refusals
    approval = next(w for w in result.waits if w.id == "approve-change")
    assert approval.delivered_by == "human:ops"


async def test_a_signed_result_is_taken_and_a_forged_one_from_anyone_else_is_not(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    _, _, keys = keys_on_disk(tmp_path)
    system = new_private_key()
    (tmp_path / "system.key").write_text(system)
    keys["system:jobs"] = public_key(system)
    plan = synthetic_plan(node("job", "start_job", job="x"), collect("final", ["job"]))
    request = RunRequest(goal="run x", scenario="synthetic", plan=plan, actor_keys=keys)
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request=request)
        wait = await pending_wait(handle, "op-job")
        forged = DeliverRequest(operation_id=wait.operation_id, data={"rows": 1}, actor="human:x")
        await handle.signal("deliver", forged)
        real = await harness(
            "deliver", handle.id, "--operation", str(wait.operation_id), "--data", '{"rows": 3}',
            "--actor", "system:jobs", "--key", str(tmp_path / "system.key"),
            client=client, task_queue=task_queue,
        )  # fmt: skip
        result: RunResult = await result_of(client, handle)
    assert real[0] == 0, real
    assert result.status is RunPhase.SUCCEEDED, result.error
    job = next(w for w in result.waits if w.id == "op-job")
    assert (job.delivered_by, job.payload) == ("system:jobs", {"rows": 3})
    refusals = [e.message or "" for e in result.trace if e.kind is TraceKind.WAIT_REJECT]
    assert any("human:x has no key in this run" in m for m in refusals), refusals
