"""What the refunds tools return, and what the report is written from."""

from __future__ import annotations

from pydantic import BaseModel, Field

from payments.api import PaymentOutcome
from scenarios.refunds.data import OrderItem


class OrderFacts(BaseModel):
    order_id: str
    customer: str
    items: list[OrderItem]
    amount_cents: int
    ordered_on: str
    delivered_on: str | None


class PolicyDecision(BaseModel):
    order_id: str
    eligible: bool
    reason_category: str
    window_days: int
    days_since_delivery: int
    refundable_cents: int


class DisputeStatus(BaseModel):
    order_id: str
    open_dispute: bool


class RefundStarted(BaseModel):
    operation_id: str
    idempotency_key: str
    order_id: str
    amount_cents: int


class RefundResult(BaseModel):
    """submit_refund's final result: the operation it started and the outcome delivered for it."""

    operation_id: str
    started: RefundStarted | None = None
    outcome: PaymentOutcome


class SummaryArgs(BaseModel):
    order: OrderFacts = Field(description="The lookup_order result.")
    policy: PolicyDecision | None = Field(
        default=None,
        description="The check_refund_policy result (none in a repair run: the refund it "
        "reports on was paid earlier).",
    )
    dispute: DisputeStatus | None = Field(
        default=None, description="The check_dispute_status result, to state in the report."
    )
    refund: RefundResult = Field(description="The submit_refund result.")
    reason: str = Field(min_length=1, description="Why the refund was made.")
