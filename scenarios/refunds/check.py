"""The refunds report check: the refund of the order is stated exactly once, for the right
amount. A refund that failed or was rejected has already failed the run before any report."""

from __future__ import annotations

import re

from pydantic import JsonValue, ValidationError

from scenarios.base import CheckInput, PlanningError, Rubric
from scenarios.refunds.data import find_order, money
from scenarios.refunds.models import RefundResult
from scenarios.refunds.planning import requested_order
from scenarios.refunds.report import refund_statement

_REFUNDED = re.compile(r"\brefunded\s+(?P<amount>\$\d[\d,]*\.\d{2})", re.I)


def check_refund_report(check: CheckInput) -> list[str]:
    try:
        order_id = requested_order(check.goal)
    except PlanningError as error:
        return [str(error)]
    record = find_order(order_id) if order_id else None
    if record is None:
        return [f"the goal names no known order ({order_id or 'no id'})"]
    expected = money(record.amount_cents)
    example = refund_statement(record.amount_cents, record.customer, record.order_id)
    statements = list(_REFUNDED.finditer(check.report))
    if len(statements) != 1:
        return [
            f"the report states a refund {len(statements)} times; state it exactly once, "
            f"e.g. '{example}'"
        ]
    problems = []
    stated = statements[0]["amount"]
    if stated != expected:
        problems.append(
            f"the report says {stated} was refunded, but order {record.order_id} is {expected}"
        )
    if record.order_id not in _line_of(check.report, statements[0].start()):
        problems.append(f"the refund statement does not name order {record.order_id}: '{example}'")
    refund = refund_result(check.results)
    if refund is None:
        problems.append("no submit_refund result to report on")
    elif refund.outcome.amount_cents != record.amount_cents:
        paid = money(refund.outcome.amount_cents)
        problems.append(f"the payment was {paid}, not the order amount {expected}")
    return problems


def refund_result(results: dict[str, JsonValue]) -> RefundResult | None:
    """The submit_refund node's result, whatever its node id."""
    for result in results.values():
        if isinstance(result, dict) and "outcome" in result and "operation_id" in result:
            try:
                return RefundResult.model_validate(result)
            except ValidationError:
                continue
    return None


def refunds_rubric(check: CheckInput) -> Rubric:
    """The critic's rubric; a faithful report repeats the order, customer, amount and operation."""
    terms: list[str] = []
    try:
        record = find_order(requested_order(check.goal) or "")
    except PlanningError:
        record = None
    if record is not None:
        terms += [record.order_id, record.customer, money(record.amount_cents)]
    refund = refund_result(check.results)
    if refund is not None:
        terms.append(refund.operation_id)
    return Rubric(
        criteria=[
            "states exactly once which order was refunded, to whom and for how much",
            "gives the payment operation and its status as the payment service reported them",
            "does not invent amounts, orders or payments",
        ],
        evidence_terms=terms,
    )


def _line_of(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start : end if end >= 0 else len(text)]
