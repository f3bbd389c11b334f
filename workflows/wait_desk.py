"""The workflow's wait desk: opens waits, applies deliveries, and waits durably with deadlines."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from pydantic import BaseModel, JsonValue
from temporalio import workflow

from harness.core.actors import actor_identity
from harness.engine.trace import TraceKind, TraceLog
from harness.waits.approval_cover import ApprovalCover, Cover
from harness.waits.deliveries import DeliverRequest
from harness.waits.signatures import canonical_actor
from harness.waits.wait_book import (
    Decision,
    Delivery,
    DeliveryReceipt,
    DeliveryRules,
    Wait,
    WaitBook,
    WaitKind,
    WaitStatus,
    late_excerpt,
)
from workflows.patches import (
    ACTOR_IDENTITY_PATCH,
    AGENT_RECONCILE_PATCH,
    DELIVERY_RULES_PATCH,
    EARLY_LOTS_PATCH,
    LATE_TRACE_PATCH,
    QUIET_CANCEL_PATCH,
    RECONCILE_RULES_PATCH,
)


class WaitDesk:
    def __init__(
        self,
        trace: TraceLog,
        on_change: Callable[[], None],
        keyed_actors: frozenset[str] = frozenset(),
    ) -> None:
        """`keyed_actors`: the run's actors with keys, as configured (a run without actor
        keys has none); compared by `identity` (decided with the run's rules)."""
        self.book = WaitBook()
        self.approvals = ApprovalCover()
        """The run's decided approvals by action, across its attempts (see held_nodes)."""
        self._trace = trace
        self._on_change = on_change
        self._keyed = keyed_actors
        self._agents_never_reconcile = False
        self._lots_by_sender = False
        self._senders_by_identity = False
        self._late_traced = False
        self.identity: Callable[[str], str] = canonical_actor
        """How this run tells who an actor is: actor_identity since 0.10."""

    def decide_rules(self) -> None:
        """First thing in the run's first task (see activity_calls.placement.llm_queue): whether
        the run takes the 0.4 rules, the lots by sender and the late trace of 0.10. The older
        releases' markers stay where their runs wrote them."""
        self._agents_never_reconcile = workflow.patched(AGENT_RECONCILE_PATCH)
        self._lots_by_sender = workflow.patched(EARLY_LOTS_PATCH)
        self._late_traced = workflow.patched(LATE_TRACE_PATCH)
        if workflow.patched(ACTOR_IDENTITY_PATCH):
            self.identity = actor_identity
            self._senders_by_identity = self._lots_by_sender

    def _rules(self) -> DeliveryRules:
        """The delivery rules the run started with (see DeliveryRules). Each patch implies the
        ones before it, so a run since AGENT_RECONCILE_PATCH asks none of the older two; they
        are asked here, lazily, where the runs that wrote their markers asked them (the SDK
        keeps a patch's first answer for the rest of the run)."""
        agents_never = self._agents_never_reconcile
        outcome = agents_never or workflow.patched(RECONCILE_RULES_PATCH)
        bounded = outcome or workflow.patched(DELIVERY_RULES_PATCH)
        return DeliveryRules(
            bounded_parking=bounded,
            reconcile_states_outcome=outcome,
            agents_never_reconcile=agents_never,
            lots_by_sender=self._lots_by_sender,
            senders_by_identity=self._senders_by_identity,
        )

    def open(
        self,
        wait_id: str,
        kind: WaitKind,
        prompt: str,
        timeout_seconds: float | None,
        *,
        node_id: str | None = None,
        operation_id: str | None = None,
        event: str | None = None,
        example: JsonValue = None,
    ) -> Wait:
        now = workflow.now()
        deadline = now + timedelta(seconds=timeout_seconds) if timeout_seconds else None
        wait = self.book.open(
            Wait(
                id=self.book.free_id(wait_id),
                kind=kind,
                node_id=node_id,
                prompt=prompt,
                operation_id=operation_id,
                event=event,
                created_at=now,
                deadline=deadline,
                example=example,
            )
        )
        self._trace.emit(
            TraceKind.WAIT_CREATE,
            node_id=node_id,
            status=WaitStatus.PENDING.value,
            message=prompt,
            data=_wait_data(wait),
        )
        self._on_change()
        parked = self.book.unpark(wait, now, self._rules()) if self.book.parked else None
        if parked is not None:
            self.deliver(parked)
        return wait

    async def until_settled(self, wait: Wait) -> Wait:
        """Wait durably until `wait` is delivered, cancelled or past its deadline."""
        timeout = None
        if wait.deadline is not None:
            timeout = max(wait.deadline - workflow.now(), timedelta(milliseconds=1))
        try:
            await workflow.wait_condition(
                lambda: wait.status is not WaitStatus.PENDING,
                timeout=timeout,
                timeout_summary=_deadline_name(wait),
            )
        except TimeoutError:
            self.book.close(wait.id, WaitStatus.EXPIRED)
            self._trace.emit(
                TraceKind.WAIT_EXPIRE,
                node_id=wait.node_id,
                status=WaitStatus.EXPIRED.value,
                message=f"wait '{wait.id}' expired at its deadline",
                data=_wait_data(wait),
            )
            self._on_change()
        return wait

    def settle(self, wait: Wait, actor: str, payload: JsonValue) -> None:
        """Deliver a wait from inside the workflow (a timer firing)."""
        wait.status = WaitStatus.DELIVERED
        wait.delivered_by = actor
        wait.delivered_at = workflow.now()
        wait.payload = payload
        self._trace.emit(
            TraceKind.WAIT_DELIVER,
            node_id=wait.node_id,
            status=wait.status.value,
            message=f"delivered by {actor}",
            data=_wait_data(wait),
        )
        self._on_change()

    def settle_from_earlier(self, wait: Wait) -> None:
        """An operation's outcome is one fact: when a replan's node starts an operation again
        and gets the same one back (an idempotent payment), a still pending `wait` takes the
        outcome an earlier attempt's wait was delivered. The system may report it again, but
        that report can come before this wait opens, and is then a duplicate of the old one."""
        if wait.status is not WaitStatus.PENDING or wait.operation_id is None:
            return
        known = [
            earlier
            for earlier in self.book.waits.values()
            if earlier is not wait
            and earlier.kind is WaitKind.ASYNC_OPERATION
            and earlier.operation_id == wait.operation_id
            and earlier.status is WaitStatus.DELIVERED
        ]
        if not known:
            return
        earlier = known[-1]
        wait.status = WaitStatus.DELIVERED
        wait.delivered_by = earlier.delivered_by
        wait.delivered_at = workflow.now()
        wait.payload = earlier.payload
        self._trace.emit(
            TraceKind.WAIT_DELIVER,
            node_id=wait.node_id,
            status="known",
            message=f"operation {wait.operation_id} already reported by {earlier.delivered_by} "
            f"to wait '{earlier.id}'; its outcome is taken, not awaited again",
            data={**_wait_data(wait), "from_wait": earlier.id},
        )
        self._on_change()

    def covered(self, node_id: str, tool: str, cover: Cover) -> None:
        """A node's approval settled by the same action's earlier decision: traced, no wait."""
        verb = "approved" if cover.decision is Decision.APPROVE else "rejected"
        self._trace.emit(
            TraceKind.WAIT_DELIVER,
            node_id=node_id,
            status="covered",
            message=f"{tool} with these arguments was {verb} by {cover.decided_by} in wait "
            f"{cover.wait_id} (attempt {cover.attempt}); not asked again",
            data={
                "wait_id": cover.wait_id,
                "kind": WaitKind.APPROVAL.value,
                "decision": cover.decision.value,
                "decided_by": cover.decided_by,
                "decided_in_attempt": cover.attempt,
            },
        )

    def cancel_pending(self, reason: str, *, node_id: str | None = None) -> None:
        """Close pending waits (of one node, or all) as CANCELLED; later deliveries are refused.
        Closing nothing changes nothing that the UI shows (runs recorded before this rule
        published anyway, and replay as they ran)."""
        closed = 0
        for wait in self.book.pending():
            if node_id is not None and wait.node_id != node_id:
                continue
            closed += 1
            self.book.close(wait.id, WaitStatus.CANCELLED)
            self._trace.emit(
                TraceKind.WAIT_REJECT,
                node_id=wait.node_id,
                status=WaitStatus.CANCELLED.value,
                message=reason,
                data=_wait_data(wait),
            )
        if closed or not workflow.patched(QUIET_CANCEL_PATCH):
            self._on_change()

    def targeted(self, request: DeliverRequest) -> Delivery:
        """A `deliver` request as the delivery of the kind its wait has."""
        return request.delivery(self.book, self._rules())

    def refuse(self, reason: str, data: dict[str, JsonValue]) -> None:
        """A message the run could not use (a malformed signal): traced, nothing changed."""
        self._trace.emit(
            TraceKind.WAIT_REJECT,
            status="rejected",
            message=reason,
            data=data,
            stamps_decisions=False,
        )

    def deliver_signed(
        self,
        request: BaseModel,
        delivery: Delivery,
        unsigned: Callable[[BaseModel, WaitKind], str | None],
    ) -> DeliveryReceipt:
        """Deliver, unless the run's signed actors refuse who sent it (traced, nothing changed)."""
        problem = unsigned(request, delivery.kind)
        if problem is None:
            return self.deliver(delivery, signed=self._signed(delivery))
        target = delivery.wait_id or delivery.operation_id or delivery.event
        self._trace.emit(
            TraceKind.WAIT_REJECT,
            status="rejected",
            message=f"{delivery.actor}: {problem}",
            data={"kind": delivery.kind.value, "actor": delivery.actor, "target": target},
        )
        return DeliveryReceipt(accepted=False, wait_id=delivery.wait_id, reason=problem)

    def _signed(self, delivery: Delivery) -> bool | None:
        """In a run with actor keys, whether the delivery (already past the signature check)
        speaks for a keyed actor, i.e. carries that actor's valid signature; else None."""
        if not self._keyed:
            return None
        keyed = {self.identity(actor) for actor in self._keyed}
        return self.identity(delivery.actor) in keyed

    def deliver(self, delivery: Delivery, signed: bool | None = None) -> DeliveryReceipt:
        receipt = self.book.deliver(delivery, workflow.now(), self._rules(), signed)
        wait = self.book.waits.get(receipt.wait_id) if receipt.wait_id else None
        if receipt.late and wait is not None and self._late_traced:
            self._trace_late(delivery, receipt, wait)
            return receipt
        self._trace.emit(
            TraceKind.WAIT_DELIVER if receipt.accepted else TraceKind.WAIT_REJECT,
            node_id=wait.node_id if wait else None,
            status="duplicate"
            if receipt.duplicate
            else ("accepted" if receipt.accepted else "rejected"),
            message=f"{delivery.actor}: {receipt.reason}",
            data={
                "wait_id": receipt.wait_id,
                "kind": delivery.kind.value,
                "actor": delivery.actor,
                "target": delivery.wait_id or delivery.operation_id or delivery.event,
            },
        )
        if receipt.accepted and not receipt.duplicate:
            self._on_change()
        return receipt

    def _trace_late(self, delivery: Delivery, receipt: DeliveryReceipt, wait: Wait) -> None:
        """A delivery to a closed wait: traced as `late` with what it said (short) and, when a
        reconcile settled the node, who reconciled it and how; it is never applied."""
        reconciled = self.book.settled_by_reconcile(wait)
        message = f"{delivery.actor}: {receipt.reason}"
        data: dict[str, JsonValue] = {
            "wait_id": wait.id,
            "kind": delivery.kind.value,
            "actor": delivery.actor,
            "target": delivery.wait_id or delivery.operation_id or delivery.event,
            "data": late_excerpt(delivery.payload),
        }
        if reconciled is not None:
            outcome = (
                reconciled.payload.get("outcome") if isinstance(reconciled.payload, dict) else None
            )
            message += (
                f"; {reconciled.delivered_by} had reconciled it as {outcome} "
                f"(wait {reconciled.id}), which stands"
            )
            data |= {
                "reconcile_wait": reconciled.id,
                "reconciled_by": reconciled.delivered_by,
                "reconciled_as": outcome if isinstance(outcome, str) else None,
            }
        self._trace.emit(
            TraceKind.WAIT_REJECT, node_id=wait.node_id, status="late", message=message, data=data
        )


def _deadline_name(wait: Wait) -> str:
    """What the UI shows for the wait's deadline timer: `approval approve-refund expires`."""
    kind = wait.kind.value.lower().replace("_", " ")
    return f"{kind} {wait.id} expires"


def _wait_data(wait: Wait) -> dict[str, JsonValue]:
    return {
        "wait_id": wait.id,
        "kind": wait.kind.value,
        "operation_id": wait.operation_id,
        "event": wait.event,
        "deadline": wait.deadline.isoformat() if wait.deadline else None,
    }
