"""A small fake payment service: refunds are paid once per idempotency key, and the outcome is
reported later through a callback, the way a real payment provider calls a webhook.

Pure Python: the callback decides how the outcome reaches the run (the worker passes one that
sends the workflow's `deliver` signal).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field, TypeAdapter

from scenarios.base import DeliverResult

log = logging.getLogger(__name__)


class PaymentStatus(StrEnum):
    PAID = "paid"
    FAILED = "failed"


class Payment(BaseModel):
    """One line of the ledger: money that left the account."""

    operation_id: str
    idempotency_key: str
    run_id: str
    order_id: str
    amount_cents: int = Field(gt=0)
    paid_at: datetime


class PaymentOutcome(BaseModel):
    """What the service reports for an operation; the refund node's delivered `outcome`."""

    status: PaymentStatus
    operation_id: str
    order_id: str
    amount_cents: int
    idempotency_key: str | None = None
    paid_at: datetime | None = None
    reason: str | None = Field(default=None, description="Why a payment failed.")


class KeyReuseError(ValueError):
    """An idempotency key sent again with a different order or amount."""


@runtime_checkable
class PaymentService(Protocol):
    async def submit(
        self, run_id: str, idempotency_key: str, order_id: str, amount_cents: int
    ) -> str: ...

    def payments(self) -> list[Payment]: ...


_LEDGER = TypeAdapter(list[Payment])


class FakePaymentService:
    def __init__(
        self,
        callback: DeliverResult,
        delay_seconds: float = 0.5,
        ledger_path: Path | None = None,
    ) -> None:
        self._callback = callback
        self._delay_seconds = delay_seconds
        self._ledger_path = ledger_path
        self._ledger: dict[str, Payment] = {}
        if ledger_path is not None and ledger_path.exists():
            loaded = _LEDGER.validate_json(ledger_path.read_bytes())
            self._ledger = {payment.idempotency_key: payment for payment in loaded}
        self._callbacks: set[asyncio.Task[None]] = set()

    async def submit(
        self, run_id: str, idempotency_key: str, order_id: str, amount_cents: int
    ) -> str:
        """Pay once per key and return the operation id; the outcome follows by callback.

        The same key again returns the same operation id without paying, and reports the outcome
        again: the caller may have lost the first report (a worker that died after submitting)."""
        payment = self._ledger.get(idempotency_key)
        if payment is None:
            payment = Payment(
                operation_id=f"pay-{uuid.uuid4().hex[:12]}",
                idempotency_key=idempotency_key,
                run_id=run_id,
                order_id=order_id,
                amount_cents=amount_cents,
                paid_at=datetime.now(UTC),
            )
            self._ledger[idempotency_key] = payment
            self._save()
        elif (payment.order_id, payment.amount_cents) != (order_id, amount_cents):
            raise KeyReuseError(
                f"idempotency key '{idempotency_key}' was used for {payment.amount_cents} cents "
                f"on order {payment.order_id}; a different refund needs a new key"
            )
        task = asyncio.create_task(self._report(payment))
        self._callbacks.add(task)
        task.add_done_callback(self._callbacks.discard)
        return payment.operation_id

    def payments(self) -> list[Payment]:
        return list(self._ledger.values())

    async def _report(self, payment: Payment) -> None:
        await asyncio.sleep(self._delay_seconds)
        outcome = PaymentOutcome(
            status=PaymentStatus.PAID,
            operation_id=payment.operation_id,
            order_id=payment.order_id,
            amount_cents=payment.amount_cents,
            idempotency_key=payment.idempotency_key,
            paid_at=payment.paid_at,
        )
        try:
            await self._callback(
                payment.run_id, payment.operation_id, outcome.model_dump(mode="json")
            )
        except Exception:
            log.exception(
                "payment callback failed: run %s, operation %s",
                payment.run_id,
                payment.operation_id,
            )

    def _save(self) -> None:
        if self._ledger_path is None:
            return
        staged = self._ledger_path.with_suffix(".tmp")
        staged.write_bytes(_LEDGER.dump_json(self.payments(), indent=2))
        staged.replace(self._ledger_path)
