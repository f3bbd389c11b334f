"""Delivery messages: what callers send to a run's waits by signal or update.

Each request turns into one `Delivery` that the run's WaitBook judges; the names of the signals
and updates that carry them are in `harness.engine.contracts`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, JsonValue

from harness.waits.wait_book import (
    NEW_RUN_RULES,
    Decision,
    Delivery,
    DeliveryRules,
    WaitBook,
    WaitKind,
)


def _signature() -> Any:
    return Field(
        default=None, description="The actor's Ed25519 signature (base64), for signed runs."
    )


DELIVERABLE_KINDS = (WaitKind.ASYNC_OPERATION, WaitKind.EXTERNAL_EVENT, WaitKind.RECONCILE)


class ApprovalRequest(BaseModel):
    """Payload of the `approve` signal and update."""

    wait_id: str
    decision: Decision = Decision.APPROVE
    actor: str
    comment: str | None = None
    signature: str | None = _signature()

    def delivery(self) -> Delivery:
        return Delivery(
            wait_id=self.wait_id,
            kind=WaitKind.APPROVAL,
            actor=self.actor,
            decision=self.decision,
            comment=self.comment,
        )


class AnswerRequest(BaseModel):
    """Payload of the `answer` signal and update."""

    wait_id: str
    text: str
    actor: str = "human:user"
    signature: str | None = _signature()

    def delivery(self) -> Delivery:
        return Delivery(
            wait_id=self.wait_id, kind=WaitKind.USER_INPUT, actor=self.actor, payload=self.text
        )


class DeliverRequest(BaseModel):
    """Payload of the `deliver` signal and update: an async result, an event, a reconcile."""

    wait_id: str | None = None
    operation_id: str | None = None
    event: str | None = None
    data: JsonValue = None
    actor: str = "system:external"
    signature: str | None = _signature()

    def delivery(self, book: WaitBook, rules: DeliveryRules = NEW_RUN_RULES) -> Delivery:
        target = Delivery(
            wait_id=self.wait_id,
            operation_id=self.operation_id,
            event=self.event,
            kind=WaitKind.ASYNC_OPERATION,
            actor=self.actor,
            payload=self.data,
        )
        wait = book.find(target, rules)
        if wait is not None and wait.kind in DELIVERABLE_KINDS:
            target.kind = wait.kind
        return target


class CancelRequest(BaseModel):
    """Payload of the `cancel` signal."""

    reason: str = "cancelled"
    actor: str = "human:user"
    signature: str | None = _signature()
