"""The refunds scenario: reading the goal, the policy checks, the idempotent payment service, the
report check, and refunds end to end on the dev server: approval, rejection, a duplicate approval,
a refusal before approval, and an uncertain outcome that waits for a reconcile delivery."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue
from temporalio.client import Client, WorkflowHandle

from activities.callbacks import signal_delivery
from activities.llm import ProviderRegistry, ScriptedProvider
from harness.dag import NodeStatus
from harness.deliveries import ApprovalRequest, DeliverRequest
from harness.errors import ErrorCode, FailureContext, ToolError
from harness.faults import FaultSpec
from harness.run import NodeOutcome, RunPhase, RunRequest, RunResult, RunStatus
from harness.validation import validate_plan
from harness.wait_book import Decision, DeliveryReceipt, Wait, WaitKind, WaitStatus
from scenarios import get_scenario
from scenarios.base import CheckInput, PlanningError, ToolContext
from scenarios.refunds.check import check_refund_report
from scenarios.refunds.payments import FakePaymentService, KeyReuseError
from scenarios.refunds.planning import plan_refund
from tests.scenarios.inprocess import planning_input
from tests.support import activity_timeline, history_events, node_of
from worker.app import build_worker
from workflows import AgentRunWorkflow

REAL_TIME_CALLBACK = "the payment callback arrives in real time; skipped time expires its wait"

GOAL = "Refund order A-1001, the customer received a damaged item"
STATEMENT = "Refunded $64.80 to Dana Whitfield for order A-1001."
REFUNDS = get_scenario("refunds")
WAIT_SECONDS = 10.0


class Callbacks:
    """A payment-service callback that records what it was called with."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, JsonValue]] = []

    async def __call__(self, run_id: str, operation_id: str, outcome: JsonValue) -> None:
        self.calls.append((run_id, operation_id, outcome))


def tool_context(payments: FakePaymentService | None = None) -> ToolContext:
    services = {"payments": payments} if payments is not None else {}
    return ToolContext(
        run_id="run-1", node_id="refund", attempt=1, writer=ScriptedProvider(), services=services
    )


async def call_tool(name: str, context: ToolContext, **arguments: Any) -> JsonValue:
    tool = REFUNDS.tool(name)
    assert tool is not None
    return await tool.run(tool.arguments.model_validate(arguments), context)


async def refused(name: str, context: ToolContext, **arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await call_tool(name, context, **arguments)
    return caught.value


# --- reading the goal ------------------------------------------------------------------------


def test_the_refund_goal_plans_three_parallel_checks_then_the_refund_then_the_report() -> None:
    plan = plan_refund(planning_input("refunds", GOAL))
    assert validate_plan(plan, REFUNDS.catalog(), 50) == []
    assert [(node.id, node.tool, node.deps) for node in plan.nodes] == [
        ("order", "lookup_order", []),
        ("policy", "check_refund_policy", []),
        ("dispute", "check_dispute_status", []),
        ("refund", "submit_refund", ["order", "policy", "dispute"]),
        ("report", "summarize_refund", ["order", "policy", "refund"]),
    ]
    refund = plan.node("refund")
    assert refund is not None
    bindings = {binding.name: binding for binding in refund.arguments}
    assert (bindings["amount_cents"].node_id, bindings["amount_cents"].path) == (
        "order",
        "amount_cents",
    )
    assert bindings["order_id"].value == "A-1001"
    assert bindings["reason"].value == "the customer received a damaged item"


def test_a_goal_without_an_order_id_asks_for_one() -> None:
    with pytest.raises(PlanningError, match="which order should be refunded"):
        plan_refund(planning_input("refunds", "Refund the customer, the kettle was damaged"))


def test_an_order_the_lookup_did_not_find_makes_the_planner_ask_for_the_right_id() -> None:
    missing = FailureContext(
        node_id="order",
        tool="lookup_order",
        arguments={"order_id": "A-9999"},
        code=ErrorCode.MISSING_INFO.value,
        message="no order with id 'A-9999'",
    )
    with pytest.raises(PlanningError, match="there is no order 'A-9999'"):
        plan_refund(planning_input("refunds", "Refund order A-9999, damaged", [missing]))


def test_an_answer_that_names_an_order_replaces_the_order_in_the_goal() -> None:
    plan = plan_refund(planning_input("refunds", "Refund order A-9999, damaged\nAnswer: A-1005"))
    order = plan.node("order")
    assert order is not None and order.arguments[0].value == "A-1005"


# --- the checks and the payment service --------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "order_id", "code", "message"),
    [
        ("check_refund_policy", "A-1002", ErrorCode.POLICY_VIOLATION, "delivered 67 days ago"),
        ("check_refund_policy", "A-1003", ErrorCode.POLICY_VIOLATION, "already been refunded"),
        ("check_dispute_status", "A-1004", ErrorCode.POLICY_VIOLATION, "case CB-55102"),
        ("lookup_order", "A-9999", ErrorCode.MISSING_INFO, "no order with id 'A-9999'"),
    ],
)
async def test_ineligible_and_unknown_orders_are_refused_with_a_reason(
    tool: str, order_id: str, code: ErrorCode, message: str
) -> None:
    arguments: dict[str, Any] = {"order_id": order_id}
    if tool == "check_refund_policy":
        arguments["reason"] = "the item arrived damaged"
    error = await refused(tool, tool_context(), **arguments)
    assert error.code is code
    assert message in error.message


async def test_a_change_of_mind_has_a_shorter_window_than_a_damaged_item() -> None:
    windows = []
    for reason in ("it arrived cracked", "the customer changed their mind"):
        decision = await call_tool(
            "check_refund_policy", tool_context(), order_id="A-1001", reason=reason
        )
        assert isinstance(decision, dict)
        windows.append((decision["reason_category"], decision["window_days"]))
    assert windows == [("damaged item", 30), ("changed mind", 14)]


async def test_the_same_idempotency_key_submitted_twice_pays_once() -> None:
    callbacks = Callbacks()
    service = FakePaymentService(callbacks, delay_seconds=0.01)
    first = await service.submit("run-1", "run-1:refund", "A-1001", 6480)
    second = await service.submit("run-1", "run-1:refund", "A-1001", 6480)
    await asyncio.sleep(0.1)
    assert first == second
    assert [(p.operation_id, p.amount_cents) for p in service.payments()] == [(first, 6480)]
    assert [(run, operation) for run, operation, _ in callbacks.calls] == [
        ("run-1", first),
        ("run-1", first),
    ]
    assert all(isinstance(o, dict) and o["status"] == "paid" for _, _, o in callbacks.calls)


async def test_a_key_reused_for_a_different_refund_is_refused() -> None:
    service = FakePaymentService(Callbacks(), delay_seconds=0.01)
    await service.submit("run-1", "run-1:refund", "A-1001", 6480)
    with pytest.raises(KeyReuseError, match="needs a new key"):
        await service.submit("run-1", "run-1:refund", "A-1001", 100)
    await asyncio.sleep(0.05)
    assert len(service.payments()) == 1


async def test_a_persisted_ledger_remembers_payments_across_restarts(tmp_path: Path) -> None:
    ledger = tmp_path / "payments.json"
    before = FakePaymentService(Callbacks(), delay_seconds=0.01, ledger_path=ledger)
    operation = await before.submit("run-1", "run-1:refund", "A-1001", 6480)
    after = FakePaymentService(Callbacks(), delay_seconds=0.01, ledger_path=ledger)
    assert await after.submit("run-1", "run-1:refund", "A-1001", 6480) == operation
    await asyncio.sleep(0.05)
    assert len(after.payments()) == 1


async def test_an_order_refunded_by_an_earlier_run_is_not_refunded_again() -> None:
    service = FakePaymentService(Callbacks(), delay_seconds=0.01)
    await service.submit("run-0", "run-0:refund", "A-1001", 6480)
    await asyncio.sleep(0.05)
    context = tool_context(service)
    policy = await refused("check_refund_policy", context, order_id="A-1001", reason="damaged")
    submit = await refused(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    assert "already been refunded in full" in policy.message
    assert "exceeds the $0.00 left to refund" in submit.message
    assert len(service.payments()) == 1


async def test_a_replan_in_the_same_run_passes_the_checks_and_is_not_paid_again() -> None:
    service = FakePaymentService(Callbacks(), delay_seconds=0.01)
    context = tool_context(service)
    first = await call_tool(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    await call_tool("check_refund_policy", context, order_id="A-1001", reason="damaged")
    again = await call_tool(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    await asyncio.sleep(0.05)
    assert first == again
    assert len(service.payments()) == 1


async def test_a_refund_submitted_without_the_checks_is_still_held_to_the_policy() -> None:
    service = FakePaymentService(Callbacks(), delay_seconds=0.01)
    error = await refused(
        "submit_refund", tool_context(service), order_id="A-1004", amount_cents=100, reason="x"
    )
    assert error.code is ErrorCode.POLICY_VIOLATION and "under dispute" in error.message
    assert service.payments() == []


# --- the report check --------------------------------------------------------------------------


def _paid_results() -> dict[str, JsonValue]:
    outcome = {"status": "paid", "operation_id": "pay-1", "order_id": "A-1001"}
    return {"refund": {"operation_id": "pay-1", "outcome": {**outcome, "amount_cents": 6480}}}


def test_a_report_that_states_the_refund_once_for_the_order_amount_passes() -> None:
    report = f"# Refund\n\n{STATEMENT}\n\n| Order total | $64.80 |"
    assert check_refund_report(CheckInput(GOAL, report, _paid_results())) == []


@pytest.mark.parametrize(
    ("report", "problem"),
    [
        (f"{STATEMENT}\nAgain: refunded $64.80.", "states a refund 2 times"),
        ("The order A-1001 was looked at.", "states a refund 0 times"),
        ("Refunded $6.48 to Dana Whitfield for order A-1001.", "but order A-1001 is $64.80"),
        ("Refunded $64.80 to Dana Whitfield.", "does not name order A-1001"),
    ],
)
def test_a_report_that_misstates_the_refund_is_rejected(report: str, problem: str) -> None:
    problems = check_refund_report(CheckInput(GOAL, report, _paid_results()))
    assert any(problem in text for text in problems), problems


# --- end to end on the dev server -------------------------------------------------------------


@asynccontextmanager
async def refunds_worker(client: Client, task_queue: str) -> AsyncIterator[FakePaymentService]:
    payments = FakePaymentService(signal_delivery(client))
    registry = ProviderRegistry.always(ScriptedProvider())
    async with build_worker(client, task_queue, registry, services={"payments": payments}):
        yield payments


async def start_refund(
    client: Client, task_queue: str, goal: str = GOAL, faults: list[FaultSpec] | None = None
) -> WorkflowHandle[Any, Any]:
    return await client.start_workflow(
        AgentRunWorkflow.run,
        RunRequest(goal=goal, scenario="refunds", faults=faults or []),
        id=f"refund-{uuid.uuid4().hex[:10]}",
        task_queue=task_queue,
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


async def finished(handle: WorkflowHandle[Any, Any]) -> RunResult:
    result: RunResult = await asyncio.wait_for(handle.result(), timeout=WAIT_SECONDS)
    return result


def node(run: RunResult | RunStatus, node_id: str) -> NodeOutcome:
    return next(outcome for outcome in run.nodes if outcome.id == node_id)


@pytest.mark.requires_local_server(
    "the payment callback arrives in real time; skipped time expires its wait first"
)
async def test_an_approved_refund_is_paid_once_and_reported_once(
    client: Client, task_queue: str
) -> None:
    async with refunds_worker(client, task_queue) as payments:
        handle = await start_refund(client, task_queue)
        approval = await pending_wait(handle, "approve-refund")
        assert approval.kind is WaitKind.APPROVAL and not payments.payments()
        receipt = await update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-refund", actor="human:ops")
        )
        result = await finished(handle)
    assert receipt.accepted and not receipt.duplicate
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None
    assert result.report.count("Refunded") == 1 and STATEMENT in result.report
    (payment,) = payments.payments()
    assert (payment.order_id, payment.amount_cents) == ("A-1001", 6480)
    assert payment.idempotency_key == f"{handle.id}:refund"
    assert payment.operation_id in result.report
    operation = next(w for w in result.waits if w.id == "op-refund")
    assert (operation.operation_id, operation.delivered_by) == (
        payment.operation_id,
        "system:payments",
    )


async def test_a_rejected_refund_fails_with_policy_violation_and_pays_nothing(
    client: Client, task_queue: str
) -> None:
    async with refunds_worker(client, task_queue) as payments:
        handle = await start_refund(client, task_queue)
        await pending_wait(handle, "approve-refund")
        rejection = ApprovalRequest(
            wait_id="approve-refund", decision=Decision.REJECT, actor="human:ops", comment="fraud"
        )
        await update(handle, "approve_sync", rejection)
        result = await finished(handle)
    assert result.status is RunPhase.FAILED_EXECUTION
    refund = node(result, "refund")
    assert (refund.status, refund.error_code) == (NodeStatus.FAILED, "POLICY_VIOLATION")
    assert node(result, "report").status is NodeStatus.SKIPPED
    assert payments.payments() == []


@pytest.mark.requires_local_server(
    "the payment callback arrives in real time; skipped time expires its wait first"
)
async def test_a_duplicate_approval_is_acknowledged_as_a_duplicate_and_pays_once(
    client: Client, task_queue: str
) -> None:
    async with refunds_worker(client, task_queue) as payments:
        handle = await start_refund(client, task_queue)
        await pending_wait(handle, "approve-refund")
        approval = ApprovalRequest(wait_id="approve-refund", actor="human:ops")
        first = await update(handle, "approve_sync", approval)
        second = await update(handle, "approve_sync", approval)
        result = await finished(handle)
    assert (first.accepted, first.duplicate) == (True, False)
    assert (second.accepted, second.duplicate) == (True, True)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert len(payments.payments()) == 1


async def test_an_order_outside_the_refund_window_halts_before_any_approval(
    client: Client, task_queue: str
) -> None:
    async with refunds_worker(client, task_queue) as payments:
        handle = await start_refund(client, task_queue, "Refund order A-1002, it stopped working")
        result = await finished(handle)
    assert result.status is RunPhase.FAILED_EXECUTION
    policy = node(result, "policy")
    assert policy.error_code == "POLICY_VIOLATION"
    assert "delivered 67 days ago" in (policy.error_message or "")
    assert node(result, "refund").status is NodeStatus.SKIPPED
    assert result.waits == []
    assert payments.payments() == []


async def test_a_refund_with_an_unknown_outcome_waits_for_reconcile_and_is_never_retried(
    client: Client, task_queue: str
) -> None:
    async with refunds_worker(client, task_queue) as payments:
        handle = await start_refund(
            client, task_queue, faults=[FaultSpec.parse("submit_refund=TIMEOUT")]
        )
        await pending_wait(handle, "approve-refund")
        await update(
            handle, "approve_sync", ApprovalRequest(wait_id="approve-refund", actor="human:ops")
        )
        reconcile = await pending_wait(handle, "reconcile-refund")
        status = await handle.query(AgentRunWorkflow.status)
        outcome = {"status": "paid", "operation_id": "pay-manual", "order_id": "A-1001"}
        found = {"operation_id": "pay-manual", "outcome": {**outcome, "amount_cents": 6480}}
        receipt = await update(
            handle,
            "deliver_sync",
            DeliverRequest(
                wait_id="reconcile-refund",
                data={"outcome": "succeeded", "result": found},
                actor="human:ops",
            ),
        )
        result = await finished(handle)
        timeline = activity_timeline(await history_events(client, handle.id))
    assert reconcile.kind is WaitKind.RECONCILE
    assert node(status, "refund").status is NodeStatus.UNKNOWN
    assert receipt.accepted
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None and "pay-manual" in result.report
    assert payments.payments() == []
    refund_calls = [s for kind, s in timeline if kind == "scheduled" and node_of(s) == "refund"]
    assert len(refund_calls) == 1
