"""Durable waits: approvals, answers, async results, events, timers, deadlines, cancellation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from durable_harness._client.run_results import result_of
from harness.core.plan import Plan
from harness.engine.budget import BudgetLimits
from harness.engine.contracts import DELIVER_SIGNAL
from harness.engine.dag import NodeStatus
from harness.engine.run import RunPhase, RunRequest, RunResult, WaitTimeouts
from harness.engine.trace import TraceKind
from harness.waits.deliveries import AnswerRequest, ApprovalRequest, DeliverRequest
from harness.waits.signatures import signed_message
from harness.waits.wait_book import Decision, DeliveryReceipt, WaitStatus
from infra.signing import new_private_key, public_key, sign
from tests.factories import approval_request, collect, delay, node, synthetic_plan
from tests.support import (
    Replans,
    deliver_update,
    execute_run,
    history_events,
    pending_wait,
    running_worker,
    signal_by_cli,
    start_run,
)
from workflows import AgentRunWorkflow
from workflows.patches import APPROVAL_COVERS_AT_START_PATCH, APPROVAL_COVERS_PATCH


async def test_approved_side_effect_runs_and_other_branches_do_not_wait(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        status = await handle.query(AgentRunWorkflow.status)
        assert status.phase is RunPhase.WAITING
        independent = next(n for n in status.nodes if n.id == "independent")
        for _ in range(100):
            if independent.status is NodeStatus.DONE:
                break
            await asyncio.sleep(0.05)
            status = await handle.query(AgentRunWorkflow.status)
            independent = next(n for n in status.nodes if n.id == "independent")
        assert independent.status is NodeStatus.DONE
        receipt = await deliver_update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-change", actor="human:ops")
        )
        result: RunResult = await result_of(client, handle)
    assert receipt.accepted and not receipt.duplicate
    assert result.status is RunPhase.SUCCEEDED
    approval = next(w for w in result.waits if w.id == "approve-change")
    assert (approval.status, approval.delivered_by) == (WaitStatus.DELIVERED, "human:ops")


async def test_rejection_fails_the_node_with_policy_violation(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        rejection = ApprovalRequest(
            wait_id="approve-change", decision=Decision.REJECT, actor="human:ops", comment="no"
        )
        await deliver_update(handle, "approve_sync", rejection)
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.FAILED_EXECUTION
    change = next(n for n in result.nodes if n.id == "change")
    assert change.error_code == "POLICY_VIOLATION"
    assert change.error_message == "rejected by human:ops: no"


async def test_bad_deliveries_are_refused_recorded_and_change_nothing(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        agent = await deliver_update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-change", actor="agent:bot")
        )
        unknown = await deliver_update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-nope", actor="human:ops")
        )
        wrong_kind = await deliver_update(
            handle, "answer_sync", AnswerRequest(wait_id="approve-change", text="yes")
        )
        still = await pending_wait(handle, "approve-change")
        first = await deliver_update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-change", actor="human:ops")
        )
        again = await deliver_update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-change", actor="human:ops")
        )
        conflicting = await deliver_update(
            handle,
            "approve_sync",
            ApprovalRequest(wait_id="approve-change", decision=Decision.REJECT, actor="human:x"),
        )
        result: RunResult = await result_of(client, handle)
    assert not agent.accepted and "agents can never approve" in agent.reason
    assert not unknown.accepted and "no wait matches 'approve-nope'" in unknown.reason
    assert not wrong_kind.accepted and "is APPROVAL, not USER_INPUT" in wrong_kind.reason
    assert still.status is WaitStatus.PENDING
    assert first.accepted and not first.duplicate
    assert again.accepted and again.duplicate
    assert not conflicting.accepted
    assert result.status is RunPhase.SUCCEEDED
    rejects = [e for e in result.trace if e.kind == "wait.reject"]
    assert len(rejects) == 4


async def test_an_expired_approval_is_a_rejection_and_a_late_delivery_is_quarantined(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request(approval=1))
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.FAILED_EXECUTION
    approval = next(w for w in result.waits if w.id == "approve-change")
    assert approval.status is WaitStatus.EXPIRED
    change = next(n for n in result.nodes if n.id == "change")
    assert change.error_code == "POLICY_VIOLATION"
    assert "expired" in (change.error_message or "")


async def test_parallel_async_operations_complete_in_either_delivery_order(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        node("job_a", "start_job", job="a"),
        node("job_b", "start_job", job="b"),
        collect("final", ["job_a", "job_b"]),
    )
    async with running_worker(client, task_queue):
        handle = await start_run(
            client, task_queue, RunRequest(goal="two jobs", scenario="synthetic", plan=plan)
        )
        wait_a = await pending_wait(handle, "op-job_a")
        wait_b = await pending_wait(handle, "op-job_b")
        by_operation = DeliverRequest(operation_id=wait_b.operation_id, data={"b": 2})
        by_wait = DeliverRequest(wait_id=wait_a.id, data={"a": 1})
        assert (await deliver_update(handle, "deliver_sync", by_operation)).accepted
        assert (await deliver_update(handle, "deliver_sync", by_wait)).accepted
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.SUCCEEDED
    outcomes = {n.id: n.result for n in result.nodes if n.id.startswith("job_")}
    assert isinstance(outcomes["job_a"], dict) and outcomes["job_a"]["outcome"] == {"a": 1}
    assert isinstance(outcomes["job_b"], dict) and outcomes["job_b"]["outcome"] == {"b": 2}


async def test_external_event_and_timer_waits_complete_the_run(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        node("nap", "sleep", seconds=0.2),
        node("signal", "await_event", event="deploy.done"),
        collect("final", ["nap", "signal"]),
    )
    async with running_worker(client, task_queue):
        handle = await start_run(
            client, task_queue, RunRequest(goal="events", scenario="synthetic", plan=plan)
        )
        await pending_wait(handle, "event-signal")
        await handle.signal(DELIVER_SIGNAL, DeliverRequest(event="deploy.done", data={"ok": True}))
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.SUCCEEDED
    kinds = {w.id: (w.kind.value, w.status) for w in result.waits}
    assert kinds == {
        "timer-nap": ("TIMER", WaitStatus.DELIVERED),
        "event-signal": ("EXTERNAL_EVENT", WaitStatus.DELIVERED),
    }


async def test_a_goal_without_cities_asks_and_the_answer_leads_to_success(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, RunRequest(goal="Compare some cities"))
        question = await pending_wait(handle, "question-1")
        assert "names no city" in question.prompt
        receipt = await deliver_update(
            handle, "answer_sync", AnswerRequest(wait_id="question-1", text="Paris and Tokyo")
        )
        result: RunResult = await result_of(client, handle)
    assert receipt.accepted
    assert result.status is RunPhase.SUCCEEDED
    assert result.report is not None and "Paris" in result.report and "Tokyo" in result.report


async def test_cancel_ends_the_run_cancelled_and_keeps_finished_results(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        delay("done_first", 10), delay("long", 600_000), collect("final", ["done_first", "long"])
    )
    async with running_worker(client, task_queue):
        handle = await start_run(
            client, task_queue, RunRequest(goal="cancel me", scenario="synthetic", plan=plan)
        )
        for _ in range(200):
            status = await handle.query(AgentRunWorkflow.status)
            if status.counts.done == 1:
                break
            await asyncio.sleep(0.05)
        await handle.cancel()
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.CANCELLED
    nodes = {n.id: n for n in result.nodes}
    assert nodes["done_first"].status is NodeStatus.DONE
    assert nodes["done_first"].result == {"ms": 10, "value": "done_first"}
    assert nodes["long"].status is NodeStatus.SKIPPED
    assert (nodes["long"].error_message or "").startswith("run cancelled")


async def test_a_late_result_after_expiry_is_quarantined_and_not_applied(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        node("job", "start_job", job="slow"),
        delay("busy", 3000),
        collect("final", ["job", "busy"]),
    )
    request = RunRequest(
        goal="late", scenario="synthetic", plan=plan, wait_timeouts=WaitTimeouts(async_operation=1)
    )
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request)
        wait = await pending_wait(handle, "op-job")
        for _ in range(100):
            waits = await handle.query(AgentRunWorkflow.waits)
            if waits[0].status is WaitStatus.EXPIRED:
                break
            await asyncio.sleep(0.1)
        late = await deliver_update(
            handle, "deliver_sync", DeliverRequest(operation_id=wait.operation_id, data={"x": 1})
        )
        result: RunResult = await result_of(client, handle)
    assert not late.accepted and "quarantined" in late.reason
    job = next(n for n in result.nodes if n.id == "job")
    assert job.status is NodeStatus.FAILED and job.error_code == "TIMEOUT"
    assert next(w for w in result.waits if w.id == "op-job").payload is None


async def test_an_approval_signalled_by_the_temporal_cli_completes_the_run(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        approval = '{"wait_id": "approve-change", "decision": "approve", "actor": "human:ops"}'
        await signal_by_cli(client, handle.id, "approve", approval)
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.SUCCEEDED


@pytest.mark.requires_local_server("the restarted worker's run waits in real time")
async def test_a_run_waiting_for_approval_survives_a_worker_restart(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
    async with running_worker(client, task_queue):
        receipt = await deliver_update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-change", actor="human:ops")
        )
        result: RunResult = await result_of(client, handle)
    assert receipt.accepted
    assert result.status is RunPhase.SUCCEEDED


async def test_a_result_that_arrives_before_its_wait_opens_is_parked_and_applied(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        delay("gate", 1500),
        node("job", "start_job", deps=["gate"], job="early"),
        collect("final", ["job"]),
    )
    async with running_worker(client, task_queue):
        handle = await start_run(
            client, task_queue, RunRequest(goal="early", scenario="synthetic", plan=plan)
        )
        early = await deliver_update(
            handle,
            "deliver_sync",
            DeliverRequest(operation_id=f"{handle.id}:job:early", data={"done": True}),
        )
        result: RunResult = await result_of(client, handle)
    assert early.accepted and "parked" in early.reason
    assert result.status is RunPhase.SUCCEEDED
    job = next(n for n in result.nodes if n.id == "job")
    assert isinstance(job.result, dict) and job.result["outcome"] == {"done": True}


async def test_a_hundred_junk_early_results_do_not_push_out_the_real_one(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        node("gate", "await_event", event="go"),
        node("job", "start_job", deps=["gate"], job="early"),
        collect("final", ["job"]),
    )
    async with running_worker(client, task_queue):
        handle = await start_run(
            client, task_queue, RunRequest(goal="early", scenario="synthetic", plan=plan)
        )
        await pending_wait(handle, "event-gate")
        await asyncio.gather(
            *(
                handle.signal(DELIVER_SIGNAL, DeliverRequest(operation_id=f"junk-{n}", data=n))
                for n in range(100)
            )
        )
        real = DeliverRequest(operation_id=f"{handle.id}:job:early", data={"done": True})
        early = await deliver_update(handle, "deliver_sync", real)
        await handle.signal(DELIVER_SIGNAL, DeliverRequest(event="go"))  # now the job starts
        result: RunResult = await result_of(client, handle)
    assert early.accepted and "parked" in early.reason
    assert result.status is RunPhase.SUCCEEDED
    job = next(n for n in result.nodes if n.id == "job")
    assert isinstance(job.result, dict) and job.result["outcome"] == {"done": True}


def early_plan() -> Plan:
    """The job starts only after the event `go`, so its result can be delivered before its
    wait opens (early)."""
    return synthetic_plan(
        node("gate", "await_event", event="go"),
        node("job", "start_job", deps=["gate"], job="early"),
        collect("final", ["job"]),
    )


async def early_deliveries(
    handle: WorkflowHandle[Any, Any], real: DeliverRequest, *, real_first: bool, junk: int = 200
) -> DeliveryReceipt:
    """The real early result and `junk` early deliveries from another sender, in that order or
    the other; the receipt of the real one."""
    await pending_wait(handle, "event-gate")

    async def flood() -> None:
        await asyncio.gather(
            *(
                handle.signal(
                    DELIVER_SIGNAL,
                    DeliverRequest(operation_id=f"junk-{n}", data=n, actor="system:junk"),
                )
                for n in range(junk)
            )
        )

    if not real_first:
        await flood()
    receipt = await deliver_update(handle, "deliver_sync", real)
    if real_first:
        await flood()
    return receipt


@pytest.mark.parametrize("real_first", [True, False], ids=["real-first", "real-last"])
async def test_two_hundred_junk_early_results_from_another_sender_leave_the_real_one(
    client: Client, task_queue: str, real_first: bool
) -> None:
    """F7: a real early result and 200 junk early deliveries from someone else, in either
    order. A short async deadline makes a lost result fail the node TIMEOUT, as it did."""
    request = RunRequest(
        goal="early",
        scenario="synthetic",
        plan=early_plan(),
        wait_timeouts=WaitTimeouts(async_operation=5),
    )
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request)
        real = DeliverRequest(
            operation_id=f"{handle.id}:job:early", data={"done": True}, actor="system:jobs"
        )
        early = await early_deliveries(handle, real, real_first=real_first)
        await handle.signal(DELIVER_SIGNAL, DeliverRequest(event="go"))  # now the job starts
        result: RunResult = await result_of(client, handle)
    assert early.accepted and "parked" in early.reason
    assert result.status is RunPhase.SUCCEEDED, result.error
    job = next(n for n in result.nodes if n.id == "job")
    assert isinstance(job.result, dict) and job.result["outcome"] == {"done": True}


@pytest.mark.parametrize("real_first", [True, False], ids=["real-first", "real-last"])
async def test_with_actor_keys_only_signed_early_results_are_parked(
    client: Client, task_queue: str, real_first: bool
) -> None:
    jobs_key = new_private_key()
    request = RunRequest(
        goal="early",
        scenario="synthetic",
        plan=early_plan(),
        wait_timeouts=WaitTimeouts(async_operation=5),
        actor_keys={"system:jobs": public_key(jobs_key)},
    )
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request)
        real = DeliverRequest(
            operation_id=f"{handle.id}:job:early", data={"done": True}, actor="system:jobs"
        )
        real.signature = sign(jobs_key, signed_message(handle.id, real))
        early = await early_deliveries(handle, real, real_first=real_first)
        await handle.signal(DELIVER_SIGNAL, DeliverRequest(event="go"))
        result: RunResult = await result_of(client, handle)
    assert early.accepted and "parked" in early.reason
    assert result.status is RunPhase.SUCCEEDED, result.error
    job = next(n for n in result.nodes if n.id == "job")
    assert isinstance(job.result, dict) and job.result["outcome"] == {"done": True}
    junk = [
        e
        for e in result.trace
        if e.kind is TraceKind.WAIT_REJECT and str(e.data.get("target", "")).startswith("junk-")
    ]
    assert len(junk) == 200 and all("no key in this run" in (e.message or "") for e in junk)


async def _replan_over_an_approved_change(
    client: Client, task_queue: str
) -> tuple[WorkflowHandle[Any, Any], RunResult]:
    """Attempt 1: the change to prod is approved, then a step fails and the run replans.
    Attempt 2 plans the same change (same tool, same arguments) and one to staging: the
    first is covered by the approval given, the second is another action and is asked."""
    first = synthetic_plan(
        node("change", "side_effect", target="prod"),
        node("broken", "fail", deps=["change"], code="INVALID_ARGUMENT"),
        collect("final", ["change", "broken"]),
    )
    second = synthetic_plan(
        node("change", "side_effect", target="prod"),
        node("other", "side_effect", target="staging"),
        collect("final", ["change", "other"]),
    )
    request = RunRequest(goal="change prod", scenario="synthetic", plan=first, max_replans=1)
    async with running_worker(client, task_queue, Replans(second)):
        handle = await start_run(client, task_queue, request)
        await pending_wait(handle, "approve-change")
        await deliver_update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-change", actor="human:ops")
        )
        await pending_wait(handle, "approve-other")
        waits = await handle.query(AgentRunWorkflow.waits)
        assert [w.id for w in waits] == ["approve-change", "approve-other"]
        await deliver_update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-other", actor="human:ops")
        )
        result: RunResult = await result_of(client, handle)
    return handle, result


async def test_an_approved_action_is_not_asked_again_after_a_replan_but_a_new_one_is(
    client: Client, task_queue: str
) -> None:
    _, result = await _replan_over_an_approved_change(client, task_queue)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempts == 2
    (covered,) = [e for e in result.trace if e.status == "covered"]
    assert (covered.attempt, covered.node_id, covered.data["wait_id"]) == (
        2,
        "change",
        "approve-change",
    )


async def test_whether_approvals_cover_replans_is_decided_in_the_run_s_first_workflow_task(
    client: Client, task_queue: str
) -> None:
    """A patch asked mid-run, right after a local activity, may land in another workflow task
    live than on replay; the run decides covers with its other patches, before any work, and
    the cover itself asks nothing more."""
    handle, result = await _replan_over_an_approved_change(client, task_queue)
    assert [e.status for e in result.trace].count("covered") == 1
    patches: dict[str, int] = {}
    tasks_done = 0
    for event in await history_events(client, handle.id):
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            tasks_done += 1
        attributes = event.marker_recorded_event_attributes
        if (
            event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
            and attributes.marker_name == "core_patch"
        ):
            patch = json.loads(attributes.details["patch-data"].payloads[0].data)
            patches[patch["id"]] = tasks_done
    assert patches[APPROVAL_COVERS_AT_START_PATCH] == 1  # the first task's, with the others
    assert APPROVAL_COVERS_PATCH not in patches


async def test_an_operation_started_again_by_a_replan_takes_the_outcome_already_reported(
    client: Client, task_queue: str
) -> None:
    """Attempt 1 starts an approved change and its outcome is reported once; a later step fails
    and the run replans. Attempt 2 starts the same change, covered by the approval, and gets
    the same operation back (as an idempotent payment does): its outcome is known, so the run
    finishes without a second report, which a system may send before the new wait opens,
    where it counted as a duplicate of the old one and the run waited for an hour."""
    first = synthetic_plan(
        node("change", "start_change", job="prod"),
        node("broken", "fail", deps=["change"], code="INVALID_ARGUMENT"),
        collect("final", ["change", "broken"]),
    )
    second = synthetic_plan(
        node("change", "start_change", job="prod"), collect("final", ["change"])
    )
    request = RunRequest(goal="change prod", scenario="synthetic", plan=first, max_replans=1)
    async with running_worker(client, task_queue, Replans(second)):
        handle = await start_run(client, task_queue, request)
        await pending_wait(handle, "approve-change")
        await deliver_update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-change", actor="human:ops")
        )
        wait = await pending_wait(handle, "op-change")
        reported = DeliverRequest(
            operation_id=wait.operation_id, data={"done": True}, actor="system:jobs"
        )
        assert (await deliver_update(handle, "deliver_sync", reported)).accepted
        result: RunResult = await asyncio.wait_for(result_of(client, handle), timeout=300)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempts == 2
    (known,) = [e for e in result.trace if e.status == "known"]
    assert (known.attempt, known.node_id, known.data["from_wait"]) == (2, "change", "op-change")
    change = next(n for n in result.nodes if n.id == "change")
    assert isinstance(change.result, dict) and change.result["outcome"] == {"done": True}


async def test_answers_that_do_not_help_stop_after_three_questions(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, RunRequest(goal="Compare some cities"))
        for number in (1, 2, 3):
            await pending_wait(handle, f"question-{number}")
            await deliver_update(
                handle, "answer_sync", AnswerRequest(wait_id=f"question-{number}", text="dunno")
            )
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.FAILED_VALIDATION
    assert [w.id for w in result.waits] == ["question-1", "question-2", "question-3"]
    decision = [e for e in result.trace if e.kind == "recovery.decide"][-1]
    assert decision.data["action"] == "HALT"


async def test_a_wall_clock_stop_closes_the_waits_of_the_nodes_it_cancels(
    client: Client, task_queue: str
) -> None:
    request = approval_request().model_copy(update={"limits": BudgetLimits(max_seconds=1)})
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.BUDGET_EXHAUSTED
    approval = next(w for w in result.waits if w.id == "approve-change")
    assert approval.status is WaitStatus.CANCELLED


async def test_a_fatal_failure_ends_the_run_without_waiting_out_pending_approvals(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        node("change", "side_effect", target="prod"),
        node("broken", "fail", code="TOOL_EXECUTION_FAILED"),
        collect("final", ["change", "broken"]),
    )
    async with running_worker(client, task_queue):
        result = await execute_run(
            client, task_queue, RunRequest(goal="halt", scenario="synthetic", plan=plan)
        )
    assert result.status is RunPhase.FAILED_EXECUTION
    approval = next(w for w in result.waits if w.id == "approve-change")
    assert approval.status is WaitStatus.CANCELLED
    change = next(n for n in result.nodes if n.id == "change")
    assert change.status is NodeStatus.SKIPPED
    assert (change.error_message or "").startswith("run halted")


async def test_a_fatal_failure_also_skips_nodes_still_waiting_for_a_free_slot(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        node("change", "side_effect", target="prod"),
        node("broken", "fail", code="TOOL_EXECUTION_FAILED"),
        delay("later_a", 10),
        delay("later_b", 10),
        collect("final", ["change", "broken", "later_a", "later_b"]),
    )
    request = RunRequest(goal="halt", scenario="synthetic", plan=plan, max_concurrency=2)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_EXECUTION
    nodes = {n.id: n for n in result.nodes}
    for later in ("later_a", "later_b"):
        assert nodes[later].status is NodeStatus.SKIPPED
        assert (nodes[later].error_message or "").startswith("run halted")


async def test_an_event_that_arrives_before_its_wait_opens_is_parked_and_applied(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        delay("gate", 1500),
        node("signal", "await_event", deps=["gate"], event="ready"),
        collect("final", ["signal"]),
    )
    async with running_worker(client, task_queue):
        handle = await start_run(
            client, task_queue, RunRequest(goal="early event", scenario="synthetic", plan=plan)
        )
        early = await deliver_update(
            handle, "deliver_sync", DeliverRequest(event="ready", data={"go": True})
        )
        result: RunResult = await result_of(client, handle)
    assert early.accepted and "parked" in early.reason
    assert result.status is RunPhase.SUCCEEDED
    assert next(n for n in result.nodes if n.id == "signal").result == {"go": True}


async def test_a_rejection_comment_is_stored_once_in_the_result_and_quoted_short_elsewhere(
    client: Client, task_queue: str
) -> None:
    comment = "".join(f"reason {n}; " for n in range(150))  # 1,700 characters or so
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        rejection = ApprovalRequest(
            wait_id="approve-change", decision=Decision.REJECT, actor="human:ops", comment=comment
        )
        await handle.execute_update(AgentRunWorkflow.approve_sync, rejection)
        result: RunResult = await result_of(client, handle)
    assert result.status is RunPhase.FAILED_EXECUTION
    assert result.model_dump_json().count(comment) == 1
    change = next(n for n in result.nodes if n.id == "change")
    assert "the whole comment is in wait approve-change" in (change.error_message or "")


async def test_the_deadline_timer_of_a_wait_is_named_for_its_wait_in_the_history(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        events = await history_events(client, handle.id)
        await handle.terminate("test finished")
    timers = [
        e.user_metadata.summary.data.decode()
        for e in events
        if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED
    ]
    assert timers == ['"approval approve-change expires"']
