"""The outbox against a real Temporal server: an outcome for a run that no longer exists (or
never did) is given up after Temporal says so, not retried forever; one Temporal cannot take
now stays in the outbox for a later round."""

from __future__ import annotations

import time
from pathlib import Path

from temporalio.client import Client

from infra.plugin import HarnessPlugin
from payments.api import RefundOrder
from payments.callbacks import Outbox
from payments.ledger import Charge, PaymentLedger


def paid_ledger(tmp_path: Path, run_id: str) -> PaymentLedger:
    ledger = PaymentLedger(tmp_path / "payments.db")
    ledger.seed([Charge("A-1", 6480)])
    order = RefundOrder(idempotency_key="k", run_id=run_id, order_id="A-1", amount_cents=6480)
    ledger.refund(order, settle_after=0)
    return ledger


async def test_an_outcome_for_a_run_that_does_not_exist_is_given_up(
    client: Client, tmp_path: Path
) -> None:
    ledger = paid_ledger(tmp_path, "no-such-run")
    await Outbox(ledger, client).drain()
    assert ledger.unreported(time.time() + 3600) == []
    (payment,) = ledger.payments()
    assert payment.status.value == "paid"


async def test_an_outcome_temporal_cannot_take_now_stays_for_a_later_round(
    tmp_path: Path,
) -> None:
    ledger = paid_ledger(tmp_path, "run-1")
    nowhere = await Client.connect("127.0.0.1:1", lazy=True, plugins=[HarnessPlugin()])
    await Outbox(ledger, nowhere).drain()
    assert ledger.unreported(time.time()) == []  # not before its retry delay
    (later,) = ledger.unreported(time.time() + 60)
    assert later.idempotency_key == "k"
