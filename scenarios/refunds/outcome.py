"""The eval's outcome check of a refund run, against the payment service's own ledger: an order
is paid at most once, whatever the runs did, and a run that SUCCEEDED leaves its order paid
exactly once, for the order's amount."""

from __future__ import annotations

from collections.abc import Mapping

from payments.api import Payment, PaymentsClient, PaymentStatus
from scenarios.base import CheckInput, OutcomeInput
from scenarios.refunds.check import check_refund_report
from scenarios.refunds.data import find_order, money
from scenarios.refunds.planning import order_ids
from scenarios.refunds.tools import PAYMENTS


async def refund_outcome(outcome: OutcomeInput, services: Mapping[str, object]) -> list[str]:
    service = services.get(PAYMENTS)
    if not isinstance(service, PaymentsClient):
        return ["this worker has no payment service client"]
    problems: list[str] = []
    if outcome.succeeded:
        report = CheckInput(outcome.goal, outcome.report or "", outcome.results)
        problems += check_refund_report(report)
    for order_id in _orders_of(outcome):
        paid = [p for p in await service.payments(order_id) if p.status is not PaymentStatus.FAILED]
        problems += _paid_once(order_id, paid, must_be_paid=outcome.succeeded)
    return problems


def _orders_of(outcome: OutcomeInput) -> list[str]:
    """The known orders the goal (with its answers) names."""
    return [order for order in order_ids(outcome.goal) if find_order(order) is not None]


def _paid_once(order_id: str, paid: list[Payment], *, must_be_paid: bool) -> list[str]:
    if len(paid) > 1:
        operations = ", ".join(payment.operation_id for payment in paid)
        return [f"order {order_id} was paid {len(paid)} times ({operations})"]
    if not paid:
        return [f"order {order_id} was never paid"] if must_be_paid else []
    record = find_order(order_id)
    if record is not None and paid[0].amount_cents != record.amount_cents - record.refunded_cents:
        return [
            f"order {order_id} was paid {money(paid[0].amount_cents)}, not "
            f"{money(record.amount_cents - record.refunded_cents)}"
        ]
    return []
