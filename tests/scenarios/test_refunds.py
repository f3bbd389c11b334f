"""The refunds scenario: reading the goal, the policy checks and the refund against the real
payment service (its HTTP server and ledger, in this process), the outcome probe, and the report
check. Runs end to end are in test_refund_runs.py; crashes in test_refund_crashes.py."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue

from activities.llm import ScriptedProvider
from harness.core.errors import ErrorCode, FailureContext, ToolError
from harness.engine.messages import OperationProbe, ProbeState
from harness.engine.validation import validate_plan
from payments.api import PaymentsClient
from payments.ledger import PaymentLedger
from payments.server import ServiceTiming, serve
from payments.shop import SHOP_CHARGES
from scenarios import get_scenario
from scenarios.base import CheckInput, PlanningError, ToolContext
from scenarios.refunds.check import check_refund_report
from scenarios.refunds.data import ORDERS
from scenarios.refunds.planning import plan_refund
from tests.payment_service import free_port
from tests.scenarios.inprocess import planning_input

GOAL = "Refund order A-1001, the customer received a damaged item"
STATEMENT = "Refunded $64.80 to Dana Whitfield for order A-1001."
REFUNDS = get_scenario("refunds")
SETTLE_LATER = ServiceTiming(settle_seconds=3600)


@pytest.fixture
def ledger(tmp_path: Path) -> PaymentLedger:
    ledger = PaymentLedger(tmp_path / "payments.db")
    ledger.seed(SHOP_CHARGES)
    return ledger


TOKEN = "a-test-token-for-the-refund-tools"


@pytest.fixture
def shop(ledger: PaymentLedger) -> Iterator[PaymentsClient]:
    """The payment service's own HTTP server over a fresh ledger, in this process."""
    server = serve(ledger, "127.0.0.1", 0, SETTLE_LATER, TOKEN)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield PaymentsClient(f"http://127.0.0.1:{server.server_port}", TOKEN)
    server.shutdown()
    server.server_close()


def test_the_payment_service_holds_a_charge_for_every_order_of_the_shop() -> None:
    """Two systems of record, the shop's orders and the provider's charges, agree."""
    charges = {c.order_id: (c.captured_cents, c.refunded_before_cents) for c in SHOP_CHARGES}
    assert charges == {o.order_id: (o.amount_cents, o.refunded_cents) for o in ORDERS}


def tool_context(payments: PaymentsClient, run_id: str = "run-1") -> ToolContext:
    return ToolContext(
        run_id=run_id,
        node_id="refund",
        attempt=1,
        writer=ScriptedProvider(),
        services={"payments": payments},
    )


async def call_tool(name: str, context: ToolContext, **arguments: Any) -> JsonValue:
    tool = REFUNDS.tool(name)
    assert tool is not None
    return await tool.call(tool.arguments.model_validate(arguments), context)


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


def test_an_order_an_earlier_run_refunded_is_replanned_as_a_lookup_of_that_refund() -> None:
    done = FailureContext(
        node_id="policy",
        tool="check_refund_policy",
        arguments={"order_id": "A-1001", "reason": "damaged"},
        code=ErrorCode.ALREADY_DONE.value,
        message="order A-1001 was refunded in full through the payment service",
    )
    plan = plan_refund(planning_input("refunds", GOAL, [done]))
    assert validate_plan(plan, REFUNDS.catalog(), 50) == []
    assert [node.tool for node in plan.nodes] == [
        "lookup_order",
        "check_dispute_status",
        "find_refund",
        "summarize_refund",
    ]


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
    tool: str, order_id: str, code: ErrorCode, message: str, shop: PaymentsClient
) -> None:
    arguments: dict[str, Any] = {"order_id": order_id}
    if tool == "check_refund_policy":
        arguments["reason"] = "the item arrived damaged"
    error = await refused(tool, tool_context(shop), **arguments)
    assert error.code is code
    assert message in error.message


async def test_a_change_of_mind_has_a_shorter_window_than_a_damaged_item(
    shop: PaymentsClient,
) -> None:
    windows = []
    for reason in ("it arrived cracked", "the customer changed their mind"):
        decision = await call_tool(
            "check_refund_policy", tool_context(shop), order_id="A-1001", reason=reason
        )
        assert isinstance(decision, dict)
        windows.append((decision["reason_category"], decision["window_days"]))
    assert windows == [("damaged item", 30), ("changed mind", 14)]


async def test_a_refund_is_paid_once_however_often_the_same_node_submits_it(
    shop: PaymentsClient,
) -> None:
    context = tool_context(shop)
    first = await call_tool(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    again = await call_tool(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    assert first == again
    assert isinstance(first, dict) and first["idempotency_key"] == shop.idempotency_key(
        "run-1", "refund"
    )
    assert [(p.operation_id, p.amount_cents) for p in await shop.payments()] == [
        (first["operation_id"], 6480)
    ]


async def test_an_order_refunded_by_an_earlier_run_is_not_refunded_again(
    shop: PaymentsClient, ledger: PaymentLedger
) -> None:
    await call_tool(
        "submit_refund",
        tool_context(shop, run_id="run-0"),
        order_id="A-1001",
        amount_cents=6480,
        reason="damaged",
    )
    context = tool_context(shop)
    paying = await refused("check_refund_policy", context, order_id="A-1001", reason="damaged")
    assert paying.code is ErrorCode.POLICY_VIOLATION  # not yet paid: nothing to report on
    assert "is being paid by run run-0" in paying.message
    ledger.settle_due(time.time() + 3600)
    policy = await refused("check_refund_policy", context, order_id="A-1001", reason="damaged")
    submit = await refused(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    assert policy.code is ErrorCode.ALREADY_DONE
    assert "refunded in full through the payment service" in policy.message
    assert submit.code is ErrorCode.POLICY_VIOLATION
    assert "exceeds the $0.00 left to refund" in submit.message
    assert len(await shop.payments()) == 1


async def test_a_replan_in_the_same_run_passes_the_checks_and_is_not_paid_again(
    shop: PaymentsClient,
) -> None:
    context = tool_context(shop)
    first = await call_tool(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    await call_tool("check_refund_policy", context, order_id="A-1001", reason="damaged")
    again = await call_tool(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    assert first == again
    assert len(await shop.payments()) == 1


async def test_a_refund_submitted_without_the_checks_is_still_held_to_the_policy(
    shop: PaymentsClient,
) -> None:
    error = await refused(
        "submit_refund", tool_context(shop), order_id="A-1004", amount_cents=100, reason="x"
    )
    assert error.code is ErrorCode.POLICY_VIOLATION and "under dispute" in error.message
    assert await shop.payments() == []


async def test_concurrent_runs_refunding_one_order_pay_it_once(shop: PaymentsClient) -> None:
    """Every run passes the checks before any has paid; the service holds the line."""
    submits = [
        call_tool(
            "submit_refund",
            tool_context(shop, run_id=f"run-{n}"),
            order_id="A-1001",
            amount_cents=6480,
            reason="damaged",
        )
        for n in range(8)
    ]
    outcomes = await asyncio.gather(*submits, return_exceptions=True)
    paid = [o for o in outcomes if isinstance(o, dict)]
    refusals = [o for o in outcomes if isinstance(o, ToolError)]
    assert len(paid) == 1 and len(refusals) == 7
    assert all(r.code is ErrorCode.POLICY_VIOLATION for r in refusals)
    assert len(await shop.payments("A-1001")) == 1


async def test_an_unreachable_payment_service_is_a_transient_failure() -> None:
    error = await refused(
        "submit_refund",
        tool_context(PaymentsClient(f"http://127.0.0.1:{free_port()}")),
        order_id="A-1001",
        amount_cents=6480,
        reason="damaged",
    )
    assert error.code is ErrorCode.TIMEOUT and "did not answer" in error.message


async def probe(context: ToolContext, operation_id: str | None = None) -> OperationProbe:
    tool = REFUNDS.tool("submit_refund")
    assert tool is not None and tool.probe is not None and tool.spec.probes_outcome
    return await tool.probe(operation_id, context)


async def test_the_probe_finds_no_payment_for_a_refund_that_never_reached_the_service(
    shop: PaymentsClient,
) -> None:
    context = tool_context(shop)
    found = await probe(context)
    late = await refused(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    assert found.state is ProbeState.NOT_FOUND
    key = shop.idempotency_key("run-1", "refund")
    assert f"no payment for idempotency key {key} (now voided)" in found.detail
    assert "was voided" in late.message and await shop.payments() == []


async def test_the_probe_reports_a_pending_then_a_settled_refund_by_key_and_by_operation(
    shop: PaymentsClient, ledger: PaymentLedger
) -> None:
    context = tool_context(shop)
    started = await call_tool(
        "submit_refund", context, order_id="A-1001", amount_cents=6480, reason="damaged"
    )
    assert isinstance(started, dict)
    pending = await probe(context)
    ledger.settle_due(time.time() + 3600)
    settled = await probe(context, str(started["operation_id"]))
    assert (pending.state, pending.started) == (ProbeState.PENDING, started)
    assert (settled.state, settled.started) == (ProbeState.SETTLED, started)
    assert isinstance(settled.outcome, dict)
    assert (settled.outcome["status"], settled.outcome["amount_cents"]) == ("paid", 6480)


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
