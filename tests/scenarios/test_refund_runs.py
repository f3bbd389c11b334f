"""Refunds end to end on the dev server, against the payment service as its own process:
approval, rejection, a duplicate approval, a refusal before approval, a timed-out call retried
under its key, a call that never reached the service, an outcome nobody can tell (reconciled by
a person, with the whole payload), and a result that comes too late."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle

from activities.llm import ProviderRegistry, ScriptedProvider
from durable_harness._client.deliveries import describe_wait
from durable_harness._client.run_results import result_of
from harness.catalog.llm import JudgeReply, JudgeRequest
from harness.engine.dag import NodeStatus
from harness.engine.faults import FaultSpec
from harness.engine.run import NodeOutcome, RunPhase, RunRequest, RunResult, RunStatus, WaitTimeouts
from harness.engine.trace import TraceKind
from harness.waits.deliveries import ApprovalRequest, DeliverRequest
from harness.waits.signatures import signed_message
from harness.waits.wait_book import Decision, DeliveryReceipt, Wait, WaitKind, WaitStatus
from infra.signing import new_private_key, public_key, sign
from tests.payment_service import PaymentService, payment_service
from tests.support import activity_timeline, history_events, node_of
from worker.app import build_worker
from workflows import AgentRunWorkflow

pytestmark = pytest.mark.requires_local_server(
    "the payment service reports in real time; skipped time expires its wait first"
)

GOAL = "Refund order A-1001, the customer received a damaged item"
STATEMENT = "Refunded $64.80 to Dana Whitfield for order A-1001."
WAIT_SECONDS = 20.0


@pytest.fixture
async def service(client: Client, tmp_path: Path) -> AsyncIterator[PaymentService]:
    async with payment_service(client, tmp_path) as running:
        yield running


@asynccontextmanager
async def refunds_worker(
    client: Client, task_queue: str, service: PaymentService
) -> AsyncIterator[None]:
    registry = ProviderRegistry.always(ScriptedProvider())
    async with build_worker(client, task_queue, registry, services={"payments": service.client}):
        yield


async def start_refund(
    client: Client,
    task_queue: str,
    goal: str = GOAL,
    faults: list[FaultSpec] | None = None,
    timeouts: WaitTimeouts | None = None,
    actor_keys: dict[str, str] | None = None,
) -> WorkflowHandle[Any, Any]:
    request = RunRequest(
        goal=goal, scenario="refunds", faults=faults or [], actor_keys=actor_keys or {}
    )
    if timeouts is not None:
        request = request.model_copy(update={"wait_timeouts": timeouts})
    return await client.start_workflow(
        AgentRunWorkflow.run, request, id=f"refund-{uuid.uuid4().hex[:10]}", task_queue=task_queue
    )


async def pending_wait(handle: WorkflowHandle[Any, Any], wait_id: str) -> Wait:
    for _ in range(int(WAIT_SECONDS / 0.1)):
        waits = await handle.query(AgentRunWorkflow.waits)
        found = [w for w in waits if w.id == wait_id and w.status is WaitStatus.PENDING]
        if found:
            return found[0]
        await asyncio.sleep(0.1)
    raise AssertionError(f"wait {wait_id} was not pending within {WAIT_SECONDS} s")


async def update(handle: WorkflowHandle[Any, Any], name: str, request: Any) -> DeliveryReceipt:
    receipt: DeliveryReceipt = await handle.execute_update(
        name, request, result_type=DeliveryReceipt
    )
    return receipt


async def approve(handle: WorkflowHandle[Any, Any]) -> DeliveryReceipt:
    await pending_wait(handle, "approve-refund")
    return await update(
        handle, "approve_sync", ApprovalRequest(wait_id="approve-refund", actor="human:ops")
    )


async def finished(
    client: Client, handle: WorkflowHandle[Any, Any], seconds: float = WAIT_SECONDS
) -> RunResult:
    return await asyncio.wait_for(result_of(client, handle), timeout=seconds)


def node(run: RunResult | RunStatus, node_id: str) -> NodeOutcome:
    return next(outcome for outcome in run.nodes if outcome.id == node_id)


def refund_calls(events: list[Any]) -> list[str]:
    timeline = activity_timeline(events)
    return [s for kind, s in timeline if kind == "scheduled" and node_of(s) == "refund"]


async def test_an_approved_refund_is_paid_once_and_reported_by_the_service(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    async with refunds_worker(client, task_queue, service):
        handle = await start_refund(client, task_queue)
        approval = await pending_wait(handle, "approve-refund")
        assert approval.kind is WaitKind.APPROVAL and await service.payments() == []
        receipt = await approve(handle)
        result = await finished(client, handle)
    assert receipt.accepted and not receipt.duplicate
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None
    assert result.report.count("Refunded") == 1 and STATEMENT in result.report
    (payment,) = await service.payments()
    assert (payment.order_id, payment.amount_cents) == ("A-1001", 6480)
    assert payment.idempotency_key == service.client.idempotency_key(handle.id, "refund")
    assert payment.operation_id in result.report
    operation = next(w for w in result.waits if w.id == "op-refund")
    assert (operation.operation_id, operation.delivered_by) == (
        payment.operation_id,
        "system:payments",
    )


async def test_a_rejected_refund_fails_with_policy_violation_and_pays_nothing(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    async with refunds_worker(client, task_queue, service):
        handle = await start_refund(client, task_queue)
        await pending_wait(handle, "approve-refund")
        rejection = ApprovalRequest(
            wait_id="approve-refund", decision=Decision.REJECT, actor="human:ops", comment="fraud"
        )
        await update(handle, "approve_sync", rejection)
        result = await finished(client, handle)
    assert result.status is RunPhase.FAILED_EXECUTION
    refund = node(result, "refund")
    assert (refund.status, refund.error_code) == (NodeStatus.FAILED, "POLICY_VIOLATION")
    assert node(result, "report").status is NodeStatus.SKIPPED
    assert await service.payments() == []


async def test_a_duplicate_approval_is_acknowledged_as_a_duplicate_and_pays_once(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    async with refunds_worker(client, task_queue, service):
        handle = await start_refund(client, task_queue)
        first = await approve(handle)
        second = await update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-refund", actor="human:ops")
        )
        result = await finished(client, handle)
    assert (first.accepted, first.duplicate) == (True, False)
    assert (second.accepted, second.duplicate) == (True, True)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert len(await service.payments()) == 1


async def test_an_order_outside_the_refund_window_halts_before_any_approval(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    async with refunds_worker(client, task_queue, service):
        handle = await start_refund(client, task_queue, "Refund order A-1002, it stopped working")
        result = await finished(client, handle)
    assert result.status is RunPhase.FAILED_EXECUTION
    policy = node(result, "policy")
    assert policy.error_code == "POLICY_VIOLATION"
    assert "delivered 67 days ago" in (policy.error_message or "")
    assert node(result, "refund").status is NodeStatus.SKIPPED
    assert result.waits == []
    assert await service.payments() == []


async def test_a_second_run_for_a_refunded_order_reports_the_earlier_refund_and_pays_nothing(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    async with refunds_worker(client, task_queue, service):
        first = await start_refund(client, task_queue)
        await approve(first)
        assert (await finished(client, first)).status is RunPhase.SUCCEEDED
        second = await finished(client, await start_refund(client, task_queue))
    [paid] = await service.payments("A-1001")
    assert second.status is RunPhase.SUCCEEDED, second.error
    assert second.attempts == 2 and second.waits == []  # replanned, asked nobody
    assert [f.code for f in second.attempt_history[0].failure] == ["ALREADY_DONE"]
    assert node(second, "refund").tool == "find_refund"
    assert paid.operation_id in (second.report or "")
    assert "paid earlier" in (second.report or "")


async def test_a_timed_out_refund_call_is_retried_under_its_key_and_paid_once(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    async with refunds_worker(client, task_queue, service):
        handle = await start_refund(
            client, task_queue, faults=[FaultSpec.parse("submit_refund=TIMEOUT")]
        )
        await approve(handle)
        result = await finished(client, handle)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert node(result, "refund").attempts == 2
    assert len(await service.payments()) == 1


async def test_a_refund_call_that_never_reached_the_service_fails_and_nobody_is_asked(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    async with refunds_worker(client, task_queue, service):
        handle = await start_refund(
            client, task_queue, faults=[FaultSpec.parse("submit_refund=TIMEOUT*3")]
        )
        await approve(handle)
        result = await finished(client, handle, 40)
    refund = node(result, "refund")
    assert result.status is RunPhase.FAILED_EXECUTION
    assert refund.status is NodeStatus.FAILED
    assert "has no payment for idempotency key" in (refund.error_message or "")
    assert "nothing was done" in (refund.error_message or "")
    assert [w.kind for w in result.waits] == [WaitKind.APPROVAL]
    probes = [e for e in result.trace if e.kind is TraceKind.NODE_PROBE]
    assert [(e.node_id, e.status) for e in probes] == [("refund", "NOT_FOUND")]
    assert await service.payments() == []


async def test_an_outcome_nobody_can_tell_waits_for_a_persons_reconcile_that_carries_the_result(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    """The service goes down after the approval: the call and the probe both fail, so a person
    is asked, shown the whole payload, and half an answer is refused."""
    async with refunds_worker(client, task_queue, service):
        handle = await start_refund(client, task_queue)
        await pending_wait(handle, "approve-refund")
        service.kill()
        await approve(handle)
        reconcile = await pending_wait(handle, "reconcile-refund")
        status = await handle.query(AgentRunWorkflow.status)
        half = await update(
            handle,
            "deliver_sync",
            DeliverRequest(
                wait_id="reconcile-refund", data={"outcome": "succeeded"}, actor="human:ops"
            ),
        )
        unknown = await update(
            handle,
            "deliver_sync",
            DeliverRequest(
                wait_id="reconcile-refund", data={"outcome": "maybe"}, actor="human:ops"
            ),
        )
        example = reconcile.example
        assert isinstance(example, dict) and isinstance(example["result"], dict)
        found = json.loads(
            json.dumps(example["result"]).replace("OPERATION_ID", "pay-found-by-hand")
        )
        by_agent = await update(
            handle,
            "deliver_sync",
            DeliverRequest(
                wait_id="reconcile-refund",
                data={"outcome": "succeeded", "result": found},
                actor="agent:planner",
            ),
        )
        receipt = await update(
            handle,
            "deliver_sync",
            DeliverRequest(
                wait_id="reconcile-refund",
                data={"outcome": "succeeded", "result": found},
                actor="human:ops",
            ),
        )
        result = await finished(client, handle, 40)
        events = await history_events(client, handle.id)
    assert node(status, "refund").status is NodeStatus.UNKNOWN
    assert example["outcome"] == "succeeded"
    assert found["outcome"]["order_id"] == "A-1001" and found["outcome"]["amount_cents"] == 6480
    hint = describe_wait(handle.id, reconcile)
    assert '"order_id": "A-1001"' in hint and '"amount_cents": 6480' in hint
    assert '{"outcome": "failed"}' in hint
    assert not half.accepted and "must carry the result" in half.reason
    assert not by_agent.accepted and "agents can never reconcile" in by_agent.reason
    assert not unknown.accepted and "a reconcile delivers" in unknown.reason
    assert receipt.accepted
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None and "pay-found-by-hand" in result.report
    probes = [e for e in result.trace if e.kind is TraceKind.NODE_PROBE]
    assert [(e.node_id, e.status) for e in probes] == [("refund", "UNKNOWN")]
    assert len(refund_calls(events)) == 1


async def test_a_late_result_that_is_still_pending_is_waited_for_and_taken_when_it_comes(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    """The run's one-second wait expires while the refund is pending; the service says so, the
    run goes on listening and takes the outcome the service reports two seconds later."""
    async with (
        payment_service(client, tmp_path, settle_seconds=2.5) as slow,
        refunds_worker(client, task_queue, slow),
    ):
        handle = await start_refund(client, task_queue, timeouts=WaitTimeouts(async_operation=1.0))
        await approve(handle)
        result = await finished(client, handle)
        (payment,) = await slow.payments()
    assert result.status is RunPhase.SUCCEEDED, result.error
    probes = [e.status for e in result.trace if e.kind is TraceKind.NODE_PROBE]
    assert probes and set(probes) == {"PENDING"}
    assert not any(w.kind is WaitKind.RECONCILE for w in result.waits)
    taken = [w for w in result.waits if w.status is WaitStatus.DELIVERED and w.operation_id]
    assert [(w.operation_id, w.delivered_by) for w in taken] == [
        (payment.operation_id, "system:payments")
    ]


async def test_a_result_pending_for_too_long_goes_to_a_person_who_is_shown_the_operation(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with (
        payment_service(client, tmp_path, settle_seconds=3600) as slow,
        refunds_worker(client, task_queue, slow),
    ):
        handle = await start_refund(client, task_queue, timeouts=WaitTimeouts(async_operation=1.0))
        await approve(handle)
        reconcile = await pending_wait(handle, "reconcile-refund")
        status = await handle.query(AgentRunWorkflow.status)
        trace = await handle.query(AgentRunWorkflow.trace)
        await handle.cancel()
        (payment,) = await slow.payments()
    assert isinstance(reconcile.example, dict) and isinstance(reconcile.example["result"], dict)
    assert reconcile.example["result"]["operation_id"] == payment.operation_id
    assert "still pending after 3 more waits" in (node(status, "refund").error_message or "")
    probes = [e.status for e in trace if e.kind is TraceKind.NODE_PROBE]
    assert probes == ["PENDING"] * 3


class JudgeFailsOnce(ScriptedProvider):
    """The offline critic, but its first verdict fails the report: the run replans."""

    def __init__(self) -> None:
        self.verdicts = 0

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        reply = await super().judge(request)
        self.verdicts += 1
        if self.verdicts > 1:
            return reply
        return reply.model_copy(update={"passed": False, "reasons": ["a critic's bad day"]})


async def test_a_replan_after_a_failed_check_does_not_ask_again_for_the_approved_refund(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    """The refund is approved and paid, then the check of the report fails and the run
    replans: the new plan's refund is the same action (tool and arguments), covered by the
    approval given, and paid once."""
    registry = ProviderRegistry.always(JudgeFailsOnce())
    services = {"payments": service.client}
    async with build_worker(client, task_queue, registry, services=services):
        handle = await start_refund(client, task_queue)
        await approve(handle)
        result = await finished(client, handle, 60)
        (payment,) = await service.payments()
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempts == 2
    approvals = [w.id for w in result.waits if w.kind is WaitKind.APPROVAL]
    assert approvals == ["approve-refund"]
    (covered,) = [e for e in result.trace if e.status == "covered"]
    assert (covered.attempt, covered.node_id) == (2, "refund")
    assert covered.data["wait_id"] == "approve-refund"
    assert covered.data["decided_by"] == "human:ops"
    assert payment.order_id == "A-1001"


async def test_a_result_that_comes_after_a_person_reconciled_is_traced_late_and_not_applied(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    """The refund stays pending, so a person reconciles it as paid; the service's result comes
    after that. Both signals are sent while no worker runs, so the run takes them in one task,
    in order: the reconcile stands, and the late result is in the trace as `late`, never
    applied."""
    async with payment_service(client, tmp_path, settle_seconds=3600) as slow:
        async with refunds_worker(client, task_queue, slow):
            handle = await start_refund(
                client, task_queue, timeouts=WaitTimeouts(async_operation=1.0)
            )
            await approve(handle)
            reconcile = await pending_wait(handle, "reconcile-refund")
        (payment,) = await slow.payments()
        assert isinstance(reconcile.example, dict)
        await handle.signal(
            "deliver",
            DeliverRequest(wait_id="reconcile-refund", data=reconcile.example, actor="human:ops"),
        )
        late = {"status": "failed", "operation_id": payment.operation_id, "late": True}
        await handle.signal(
            "deliver",
            DeliverRequest(operation_id=payment.operation_id, data=late, actor="system:payments"),
        )
        async with refunds_worker(client, task_queue, slow):
            result = await finished(client, handle, 40)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert node(result, "refund").result == reconcile.example["result"]
    operation_waits = [w for w in result.waits if w.operation_id == payment.operation_id]
    assert operation_waits and all(w.payload is None for w in operation_waits)
    (event,) = [e for e in result.trace if e.status == "late"]
    assert event.kind is TraceKind.WAIT_REJECT and event.node_id == "refund"
    assert event.data["reconciled_by"] == "human:ops"
    assert event.data["reconcile_wait"] == "reconcile-refund"
    assert event.data["reconciled_as"] == "succeeded"
    assert event.data["data"] == json.dumps(late, sort_keys=True)
    assert "which stands" in (event.message or "")


async def test_with_signed_actors_the_services_signed_outcome_is_taken_and_a_forged_one_is_not(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    service_key, ops_key = new_private_key(), new_private_key()
    (tmp_path / "payments.key").write_text(service_key)
    keys = {"system:payments": public_key(service_key), "human:ops": public_key(ops_key)}
    async with (
        payment_service(client, tmp_path, key_file=tmp_path / "payments.key") as signed,
        refunds_worker(client, task_queue, signed),
    ):
        handle = await start_refund(client, task_queue, actor_keys=keys)
        await pending_wait(handle, "approve-refund")
        approval = ApprovalRequest(wait_id="approve-refund", actor="human:ops")
        message = signed_message(handle.id, approval)
        approval.signature = sign(ops_key, message)
        await update(handle, "approve_sync", approval)
        wait = await pending_wait(handle, "op-refund")
        forged = {"status": "paid", "operation_id": wait.operation_id, "order_id": "A-1001"}
        await handle.signal(
            "deliver",
            DeliverRequest(
                operation_id=wait.operation_id,
                data={**forged, "amount_cents": 1},
                actor="human:mallory",
            ),
        )
        result = await finished(client, handle)
        (payment,) = await signed.payments()
    assert result.status is RunPhase.SUCCEEDED, result.error
    operation = next(w for w in result.waits if w.id == "op-refund")
    assert operation.delivered_by == "system:payments"
    assert isinstance(operation.payload, dict) and operation.payload["amount_cents"] == 6480
    refusals = [e.message or "" for e in result.trace if e.kind is TraceKind.WAIT_REJECT]
    assert any("human:mallory has no key in this run" in m for m in refusals), refusals
    assert payment.operation_id == wait.operation_id
