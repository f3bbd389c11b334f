"""Governance acts on the dev server: one identity however an actor is spelt, and an agent that
writes only where its run works."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError

from durable_harness import TaskRefused
from durable_harness._client import tasks
from durable_harness._client.run_results import result_of
from harness.engine.run import RunPhase, RunRequest, RunResult
from harness.engine.trace import TraceKind
from harness.governance.task_commands import ReviewSubmission, Submit, TaskCommand
from harness.governance.task_graph import CreateTask, GraphCommand
from harness.waits.deliveries import ApprovalRequest
from harness.waits.signatures import signed_message
from infra.signing import new_private_key, public_key, sign
from tests.factories import collect, node, synthetic_plan
from tests.support import execute_run, pending_wait, running_worker, start_run

pytestmark = pytest.mark.requires_local_server("tasks are listed by the HarnessTask* attributes")


def new_scope() -> str:
    return f"sec-{uuid.uuid4().hex[:8]}"


async def test_unsigned_cancel_with_another_spelling_of_a_keyed_actor_leaves_the_run_running(
    client: Client, task_queue: str
) -> None:
    ops = new_private_key()
    plan = synthetic_plan(
        node("change", "side_effect", target="prod"), collect("final", ["change"])
    )
    request = RunRequest(
        goal="change prod",
        scenario="synthetic",
        plan=plan,
        actor_keys={"human:ops": public_key(ops)},
    )
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request=request)
        await pending_wait(handle, "approve-change")
        await handle.signal("cancel", {"reason": "stop it", "actor": "Human:Ops"})
        approval = ApprovalRequest(wait_id="approve-change", actor="human:ops")
        signature = sign(ops, signed_message(handle.id, approval))
        await handle.signal(
            "approve", approval.model_copy(update={"signature": signature}).model_dump()
        )
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.SUCCEEDED, result.error
    refusals = [e.message or "" for e in result.trace if e.kind is TraceKind.WAIT_REJECT]
    assert any(m.startswith("Human:Ops: human:ops has a key") for m in refusals), refusals


async def test_two_spellings_of_one_person_cannot_approve_their_own_submission_on_a_server(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        created = await tasks.scope_command(
            client,
            task_queue,
            GraphCommand(scope=scope, actor="human:lead", operation=CreateTask(title="refund")),
        )
        assert created.accepted and created.id, created.reason
        submit = TaskCommand(task_id=created.id, actor="human:alice", operation=Submit(summary="x"))
        submitted = await tasks.task_command(client, scope, submit)
        assert submitted.accepted and submitted.id, submitted.reason
        review = ReviewSubmission(submission_id=submitted.id, approve=True)
        approve = TaskCommand(task_id=created.id, actor="human:Alice", operation=review)
        with pytest.raises(TaskRefused) as refused:
            await tasks.task_command(client, scope, approve)
        by_lead = TaskCommand(task_id=created.id, actor="human:lead", operation=review)
        approved = await tasks.task_command(client, scope, by_lead)
        ledger = await tasks.ledger(client, scope, created.id)
    assert "human:Alice (human:alice) submitted 'sub-1'" in str(refused.value)
    assert approved.accepted, approved.reason
    assert [r.reviewed_by for r in ledger.reviews] == ["human:lead"]


async def test_unbound_run_cannot_create_tasks_in_another_scope(
    client: Client, task_queue: str
) -> None:
    home, elsewhere = new_scope(), new_scope()
    plan = synthetic_plan(
        node("open", "harness_task_manage", action="create", title="follow up", scope=home),
        node(
            "sneak",
            "harness_task_manage",
            deps=["open"],
            action="create",
            title="not mine",
            scope=elsewhere,
        ),
        collect("final", ["open", "sneak"]),
    )
    request = RunRequest(goal="open tasks", scenario="synthetic", plan=plan, max_replans=0)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
        home_graph = await tasks.graph(client, home)
        with pytest.raises(Exception) as no_graph:
            await tasks.graph(client, elsewhere)
    sneak = next(n for n in result.nodes if n.id == "sneak")
    assert sneak.error_code == "POLICY_VIOLATION", sneak
    assert "writes in scope" in str(sneak.error_message)
    assert list(home_graph.tasks) == ["task-1"]
    assert "not found" in str(no_graph.value).lower() or elsewhere in str(no_graph.value)


async def test_a_claim_to_another_scope_is_refused_by_the_run_itself(
    client: Client, task_queue: str
) -> None:
    """The run is where its scope is decided, so two creates at once are decided in order."""
    plan = synthetic_plan(
        node("change", "side_effect", target="prod"), collect("final", ["change"])
    )
    request = RunRequest(goal="x", scenario="synthetic", plan=plan)
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request=request)
        await pending_wait(handle, "approve-change")
        first = await handle.execute_update("claim_task_scope", {"scope": "shop-a"})
        with pytest.raises(WorkflowUpdateFailedError) as second:
            await handle.execute_update("claim_task_scope", {"scope": "shop-b"})
        await handle.signal("cancel", {"reason": "done", "actor": "human:ops"})
    assert first["accepted"] is True
    assert "writes in scope 'shop-a' only" in str(second.value.cause)
