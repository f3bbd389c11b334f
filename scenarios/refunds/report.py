"""The refund report, rendered from the facts alone: the draft every writer starts from."""

from __future__ import annotations

from scenarios.refunds.data import money
from scenarios.refunds.models import SummaryArgs


def refund_statement(amount_cents: int, customer: str, order_id: str) -> str:
    return f"Refunded {money(amount_cents)} to {customer} for order {order_id}."


def render_report(args: SummaryArgs) -> str:
    """The report as markdown, from the facts alone; it states the refund exactly once."""
    order, policy, refund = args.order, args.policy, args.refund
    outcome = refund.outcome
    items = "; ".join(
        f"{item.quantity} x {item.name} ({money(item.unit_price_cents)})" for item in order.items
    )
    delivered = f", delivered {order.delivered_on}" if order.delivered_on else ""
    status = outcome.status.value
    if outcome.paid_at is not None:
        status += f" at {outcome.paid_at.isoformat(timespec='seconds')}"
    reason = (
        f"{args.reason} ({policy.reason_category}: {policy.days_since_delivery} days after "
        f"delivery, within the {policy.window_days}-day window)"
        if policy is not None
        else f"{args.reason} (paid earlier; the policy was checked then)"
    )
    rows = [
        ("Customer", order.customer),
        ("Items", items),
        ("Order total", f"{money(order.amount_cents)} (ordered {order.ordered_on}{delivered})"),
        ("Reason", reason),
    ]
    if args.dispute is not None:
        disputed = "an open dispute" if args.dispute.open_dispute else "no open dispute"
        rows.append(("Dispute status", f"checked: {disputed}"))
    rows += [("Payment operation", refund.operation_id), ("Payment status", status)]
    if refund.started is not None:
        rows.append(("Idempotency key", refund.started.idempotency_key))
    lines = [
        f"# Refund for order {order.order_id}",
        "",
        refund_statement(outcome.amount_cents, order.customer, order.order_id),
        "",
        "| Field | Value |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in rows),
    ]
    return "\n".join(lines)
