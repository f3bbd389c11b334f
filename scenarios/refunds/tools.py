"""The refunds tools: three independent checks, the refund itself (approved, asynchronous,
idempotent) and the report of what was refunded."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.llm import TextRequest
from harness.catalog.tools import ToolCompletion, ToolRole, ToolSpec
from harness.core.errors import ErrorCode, ToolError
from harness.core.untrusted import fence, with_data_rule
from harness.engine.messages import OperationProbe, ProbeState
from payments.api import (
    KeyReuseError,
    NotAuthorizedError,
    OverRefundError,
    Payment,
    PaymentOutcome,
    PaymentsClient,
    PaymentsError,
    PaymentStatus,
    RefundOrder,
    UnavailableError,
)
from scenarios.base import Tool, ToolContext
from scenarios.refunds.data import (
    AS_OF,
    WINDOW_DAYS,
    OrderRecord,
    ReasonCategory,
    categorize,
    find_order,
    money,
)
from scenarios.refunds.models import (
    DisputeStatus,
    OrderFacts,
    PolicyDecision,
    RefundResult,
    RefundStarted,
    SummaryArgs,
)
from scenarios.refunds.report import render_report

PAYMENTS = "payments"


class OrderArgs(BaseModel):
    order_id: str = Field(min_length=1, description="Order id, e.g. 'A-1001'.")


class PolicyArgs(OrderArgs):
    reason: str = Field(min_length=1, description="Why the customer wants a refund, in words.")


class RefundArgs(OrderArgs):
    amount_cents: int = Field(gt=0, description="Amount to refund, in cents.")
    reason: str = Field(min_length=1, description="Why the refund is made.")


def _order(order_id: str) -> OrderRecord:
    record = find_order(order_id)
    if record is None:
        raise ToolError(
            ErrorCode.MISSING_INFO,
            f"no order with id '{order_id}'; check the id (orders look like A-1001)",
            data={"order_id": order_id},
        )
    return record


def _payments(ctx: ToolContext) -> PaymentsClient:
    service = ctx.services.get(PAYMENTS)
    if not isinstance(service, PaymentsClient):
        raise ToolError(
            ErrorCode.CONFIG_INVALID,
            f"this worker has no payment service; pass services={{'{PAYMENTS}': "
            "PaymentsClient(URL)}} to build_worker",
        )
    return service


def _unreachable(error: UnavailableError) -> ToolError:
    """The service did not answer: retried, and for a refund its outcome is asked for later."""
    return ToolError(ErrorCode.TIMEOUT, str(error))


def _not_authorized(error: NotAuthorizedError) -> ToolError:
    """The worker has no token, or not the service's: a configuration for a person to fix."""
    return ToolError(ErrorCode.AUTH_FAILED, f"the payment service refused: {error.message}")


async def _paid_through_service(record: OrderRecord, ctx: ToolContext) -> list[Payment]:
    """Refunds of this order the payment service has accepted (failed ones paid nothing)."""
    try:
        found = await _payments(ctx).payments(record.order_id)
    except UnavailableError as error:
        raise _unreachable(error) from error
    except NotAuthorizedError as error:
        raise _not_authorized(error) from error
    return [payment for payment in found if payment.status is not PaymentStatus.FAILED]


def _idempotency_key(ctx: ToolContext) -> str:
    """The same for every attempt of this node in this run: paid at most once. Keyed with the
    service's token, so it cannot be guessed by whoever knows the run's id."""
    try:
        return _payments(ctx).idempotency_key(ctx.run_id, ctx.node_id)
    except NotAuthorizedError as error:
        raise _not_authorized(error) from error


def legacy_idempotency_key(run_id: str, node_id: str) -> str:
    """The key refunds were paid under before keys were keyed with the token: a run that
    submitted its refund before the upgrade is still found by it."""
    return f"{run_id}:{node_id}"


def _total(payments: list[Payment]) -> int:
    return sum(payment.amount_cents for payment in payments)


async def lookup_order(args: OrderArgs, ctx: ToolContext) -> JsonValue:
    record = _order(args.order_id)
    facts = OrderFacts(
        order_id=record.order_id,
        customer=record.customer,
        items=record.items,
        amount_cents=record.amount_cents,
        ordered_on=record.ordered_on.isoformat(),
        delivered_on=record.delivered_on.isoformat() if record.delivered_on else None,
    )
    return facts.model_dump(mode="json")


def _within_window(record: OrderRecord, reason: str) -> tuple[ReasonCategory, int, int]:
    """(category, window, days since delivery) when the reason's window is still open."""
    category = categorize(reason)
    window = WINDOW_DAYS[category]
    event = "delivered" if record.delivered_on else "ordered"
    days = (AS_OF - (record.delivered_on or record.ordered_on)).days
    if days > window:
        raise ToolError(
            ErrorCode.POLICY_VIOLATION,
            f"order {record.order_id} was {event} {days} days ago; refunds for "
            f"'{category.value}' are allowed within {window} days",
        )
    return category, window, days


def _not_disputed(record: OrderRecord) -> None:
    if record.dispute is not None:
        dispute = record.dispute
        raise ToolError(
            ErrorCode.POLICY_VIOLATION,
            f"order {record.order_id} is under dispute (case {dispute.case_id}, opened "
            f"{dispute.opened_on.isoformat()}: {dispute.reason}); the dispute process decides "
            "any refund",
        )


async def check_refund_policy(args: PolicyArgs, ctx: ToolContext) -> JsonValue:
    record = _order(args.order_id)
    category, window, days = _within_window(record, args.reason)
    # This run's own payment is not an earlier refund: a replan submits it again with the same
    # idempotency key, and that pays nothing.
    earlier = [p for p in await _paid_through_service(record, ctx) if p.run_id != ctx.run_id]
    refundable = record.amount_cents - record.refunded_cents - _total(earlier)
    paid = [p for p in earlier if p.status is PaymentStatus.PAID]
    if refundable <= 0 and earlier and not paid:
        raise ToolError(
            ErrorCode.POLICY_VIOLATION,
            f"a refund of order {record.order_id} is being paid by run {earlier[-1].run_id} "
            f"(operation {earlier[-1].operation_id}); run again once it has settled",
        )
    if refundable <= 0 and paid:
        raise ToolError(
            ErrorCode.ALREADY_DONE,
            f"order {record.order_id} was refunded in full through the payment service "
            f"({money(_total(paid))}, operation {paid[-1].operation_id}); look the "
            "payment up instead of paying again",
            {"order_id": record.order_id},
        )
    if refundable <= 0:
        raise ToolError(
            ErrorCode.POLICY_VIOLATION,
            f"order {record.order_id} has already been refunded in full "
            f"({money(record.amount_cents)})",
        )
    decision = PolicyDecision(
        order_id=record.order_id,
        eligible=True,
        reason_category=category.value,
        window_days=window,
        days_since_delivery=days,
        refundable_cents=refundable,
    )
    return decision.model_dump()


async def check_dispute_status(args: OrderArgs, ctx: ToolContext) -> JsonValue:
    record = _order(args.order_id)
    _not_disputed(record)
    return DisputeStatus(order_id=record.order_id, open_dispute=False).model_dump()


async def submit_refund(args: RefundArgs, ctx: ToolContext) -> JsonValue:
    """Ask the payment service to pay; its outcome is delivered to the run later.

    The idempotency key is the same for every attempt of this node in this run, so a retried or
    re-delivered refund is paid at most once; the service also refuses to refund more than was
    captured, whichever run asks. The policy is enforced here too, so a plan that leaves out the
    checks cannot pay what they would refuse."""
    record = _order(args.order_id)
    _within_window(record, args.reason)
    _not_disputed(record)
    key = _idempotency_key(ctx)
    others = [p for p in await _paid_through_service(record, ctx) if p.idempotency_key != key]
    refundable = record.amount_cents - record.refunded_cents - _total(others)
    if args.amount_cents > refundable:
        raise ToolError(
            ErrorCode.POLICY_VIOLATION,
            f"a refund of {money(args.amount_cents)} exceeds the {money(max(refundable, 0))} "
            f"left to refund on order {record.order_id}",
        )
    order = RefundOrder(
        idempotency_key=key,
        run_id=ctx.run_id,
        order_id=record.order_id,
        amount_cents=args.amount_cents,
    )
    try:
        accepted = await _payments(ctx).refund(order)
    except (KeyReuseError, OverRefundError) as error:
        raise ToolError(ErrorCode.POLICY_VIOLATION, error.message) from error
    except NotAuthorizedError as error:
        raise _not_authorized(error) from error
    except PaymentsError as error:
        raise ToolError(ErrorCode.TOOL_EXECUTION_FAILED, error.message) from error
    except UnavailableError as error:
        raise _unreachable(error) from error
    return _started(accepted.payment).model_dump()


async def find_refund(args: OrderArgs, ctx: ToolContext) -> JsonValue:
    """The refund already paid on the order, as the payment service records it: what a repair
    run reports on instead of paying again."""
    record = _order(args.order_id)
    paid = [p for p in await _paid_through_service(record, ctx) if p.status is PaymentStatus.PAID]
    if not paid:
        raise ToolError(
            ErrorCode.MISSING_INFO,
            f"the payment service has no paid refund of order {record.order_id}",
            {"order_id": record.order_id},
        )
    payment = paid[-1]
    return RefundResult(
        operation_id=payment.operation_id,
        started=_started(payment),
        outcome=PaymentOutcome.of(payment),
    ).model_dump(mode="json")


def _started(payment: Payment) -> RefundStarted:
    return RefundStarted(
        operation_id=payment.operation_id,
        idempotency_key=payment.idempotency_key,
        order_id=payment.order_id,
        amount_cents=payment.amount_cents,
    )


async def probe_refund(operation_id: str | None, ctx: ToolContext) -> OperationProbe:
    """What the payment service knows of this node's refund: by operation id when the run has
    one, else by the node's idempotency key, which the service voids if nothing was paid under
    it, so a request of this node still on its way cannot pay after the run was told nothing
    was."""
    service = _payments(ctx)
    key = _idempotency_key(ctx)
    try:
        if operation_id is not None:
            payment = await service.payment(operation_id)
        else:
            legacy = await service.payment_by_key(legacy_idempotency_key(ctx.run_id, ctx.node_id))
            payment = legacy or await service.void_unpaid(key)
    except UnavailableError as error:
        raise _unreachable(error) from error
    except NotAuthorizedError as error:
        raise _not_authorized(error) from error
    if payment is None:
        asked = operation_id or f"idempotency key {key} (now voided)"
        return OperationProbe(
            state=ProbeState.NOT_FOUND, detail=f"the payment service has no payment for {asked}"
        )
    started = _started(payment).model_dump()
    if payment.status is PaymentStatus.PENDING:
        detail = f"payment {payment.operation_id} is pending at the payment service"
        return OperationProbe(state=ProbeState.PENDING, started=started, detail=detail)
    return OperationProbe(
        state=ProbeState.SETTLED,
        started=started,
        outcome=PaymentOutcome.of(payment).model_dump(mode="json"),
        detail=f"payment {payment.operation_id} is {payment.status.value} at the payment service",
    )


async def summarize_refund(args: SummaryArgs, ctx: ToolContext) -> JsonValue:
    outcome = args.refund.outcome
    if outcome.status is not PaymentStatus.PAID:
        raise ToolError(
            ErrorCode.TOOL_EXECUTION_FAILED,
            f"payment operation {args.refund.operation_id} for order {args.order.order_id} "
            f"failed ({outcome.reason or 'no reason given'}); nothing was refunded",
        )
    reply = await ctx.write(
        TextRequest(
            system=with_data_rule(
                "You write short markdown refund reports for a support team. Use only the "
                "facts given. State the refund exactly once, as 'Refunded $AMOUNT to CUSTOMER "
                "for order ORDER_ID', and never call any other amount refunded."
            ),
            prompt="Write the refund report.\n\n" + fence("facts", args.model_dump_json(indent=2)),
            draft=render_report(args),
            max_output_tokens=600,
        )
    )
    return reply.text.strip()


TOOLS = (
    Tool(
        spec=ToolSpec.from_model(
            "lookup_order",
            "An order: customer, items, amount in cents, order and delivery dates.",
            OrderArgs,
            cost_hint=0.1,
            result=OrderFacts,
        ),
        arguments=OrderArgs,
        run=lookup_order,
    ),
    Tool(
        spec=ToolSpec.from_model(
            "check_refund_policy",
            "Whether the refund policy allows refunding the order for this reason: the window "
            "for the reason and what is left to refund. Refusals fail with POLICY_VIOLATION.",
            PolicyArgs,
            cost_hint=0.1,
            result=PolicyDecision,
        ),
        arguments=PolicyArgs,
        run=check_refund_policy,
    ),
    Tool(
        spec=ToolSpec.from_model(
            "check_dispute_status",
            "Whether the order is under dispute (a chargeback); a disputed order fails with "
            "POLICY_VIOLATION.",
            OrderArgs,
            cost_hint=0.1,
            result=DisputeStatus,
        ),
        arguments=OrderArgs,
        run=check_dispute_status,
    ),
    Tool(
        spec=ToolSpec.from_model(
            "find_refund",
            "The refund already paid on an order, from the payment service, in submit_refund's "
            "result shape: for a task whose refund an earlier run paid (never pay twice). Fails "
            "with MISSING_INFO when nothing was paid.",
            OrderArgs,
            cost_hint=0.1,
        ),
        arguments=OrderArgs,
        run=find_refund,
    ),
    Tool(
        spec=ToolSpec.from_model(
            "submit_refund",
            "Refund money to the customer through the payment service. Needs approval; runs as "
            "an async operation whose outcome the payment service delivers. Depend on the three "
            "checks and bind amount_cents to lookup_order's amount_cents. Idempotent: a "
            "retried call pays once.",
            RefundArgs,
            cost_hint=1.0,
            side_effects=True,
            idempotent=True,
            probes_outcome=True,
            reconcile_example={
                "operation_id": "OPERATION_ID",
                "outcome": {
                    "status": "paid",
                    "operation_id": "OPERATION_ID",
                    "order_id": "ORDER_ID",
                    "amount_cents": "AMOUNT_CENTS",
                },
            },
            requires_approval=True,
            completion=ToolCompletion.ASYNC_OPERATION,
        ),
        arguments=RefundArgs,
        run=submit_refund,
        probe=probe_refund,
    ),
    Tool(
        spec=ToolSpec.from_model(
            "summarize_refund",
            "The final report of what was refunded: order, customer, amount, payment operation "
            "and status. Bind order, policy and refund to the results of lookup_order, "
            "check_refund_policy and submit_refund.",
            SummaryArgs,
            role=ToolRole.FINAL_SYNTHESIS,
            cost_hint=1.0,
            uses_llm=True,
        ),
        arguments=SummaryArgs,
        run=summarize_refund,
    ),
)
