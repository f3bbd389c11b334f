"""The payment service's ledger and HTTP API: one payment per key, never more than was captured,
durable across restarts, and an outbox that keeps every outcome until it is reported."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from payments.api import (
    KeyReuseError,
    OverRefundError,
    PaymentsClient,
    PaymentsError,
    PaymentStatus,
    RefundOrder,
)
from payments.ledger import Charge, PaymentLedger
from payments.server import ServiceTiming, serve

TOKEN = "a-test-token-for-the-ledger-tests"


def order(key: str = "run-1:refund", amount: int = 6480, order_id: str = "A-1") -> RefundOrder:
    return RefundOrder(idempotency_key=key, run_id="run-1", order_id=order_id, amount_cents=amount)


@pytest.fixture
def ledger(tmp_path: Path) -> PaymentLedger:
    ledger = PaymentLedger(tmp_path / "payments.db")
    ledger.seed([Charge("A-1", 6480), Charge("A-2", 10000, refunded_before_cents=4000)])
    return ledger


@pytest.fixture
def service(ledger: PaymentLedger) -> Iterator[str]:
    server = serve(ledger, "127.0.0.1", 0, ServiceTiming(settle_seconds=3600), TOKEN)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_the_same_key_returns_the_first_payment_and_pays_nothing_more(
    ledger: PaymentLedger,
) -> None:
    first = ledger.refund(order(), settle_after=0)
    second = ledger.refund(order(), settle_after=0)
    assert (first.created, second.created) == (True, False)
    assert first.payment == second.payment
    assert len(ledger.payments()) == 1


def test_a_key_reused_for_a_different_refund_is_refused(ledger: PaymentLedger) -> None:
    ledger.refund(order(), settle_after=0)
    with pytest.raises(KeyReuseError, match="needs a new key"):
        ledger.refund(order(amount=100), settle_after=0)
    assert len(ledger.payments()) == 1


def test_no_charge_is_refunded_past_what_was_captured(ledger: PaymentLedger) -> None:
    ledger.refund(order(key="a", order_id="A-2", amount=5000), settle_after=0)
    with pytest.raises(OverRefundError, match="exceeds the 1000 cents left"):
        ledger.refund(order(key="b", order_id="A-2", amount=1001), settle_after=0)
    assert ledger.refund(order(key="c", order_id="A-2", amount=1000), settle_after=0).created


def test_a_refund_of_an_order_never_charged_is_refused(ledger: PaymentLedger) -> None:
    with pytest.raises(PaymentsError, match="no captured charge for order 'Z-9'"):
        ledger.refund(order(order_id="Z-9"), settle_after=0)


def test_the_ledger_remembers_payments_across_a_restart(tmp_path: Path) -> None:
    before = PaymentLedger(tmp_path / "payments.db")
    before.seed([Charge("A-1", 6480)])
    paid = before.refund(order(), settle_after=0).payment
    after = PaymentLedger(tmp_path / "payments.db")
    after.seed([Charge("A-1", 6480)])
    assert after.refund(order(), settle_after=0).payment == paid
    assert after.payments() == [paid]


def test_many_writers_on_one_file_pay_one_order_once(tmp_path: Path) -> None:
    """Separate ledgers on one file stand for separate service processes."""
    path = tmp_path / "payments.db"
    PaymentLedger(path).seed([Charge("A-1", 6480)])

    def attempt(n: int) -> bool:
        try:
            return PaymentLedger(path).refund(order(key=f"run-{n}"), settle_after=0).created
        except OverRefundError:
            return False

    with ThreadPoolExecutor(max_workers=16) as pool:
        created = list(pool.map(attempt, range(32)))
    assert created.count(True) == 1
    assert len(PaymentLedger(path).payments("A-1")) == 1


def test_a_payment_settles_when_due_and_stays_in_the_outbox_until_reported(
    ledger: PaymentLedger,
) -> None:
    payment = ledger.refund(order(), settle_after=time.time() + 60).payment
    assert ledger.unreported(time.time()) == []
    assert ledger.settle_due(time.time()) == 0
    assert ledger.settle_due(time.time() + 61) == 1
    (due,) = ledger.unreported(time.time())
    assert (due.operation_id, due.status) == (payment.operation_id, PaymentStatus.PAID)
    ledger.report_later(payment.operation_id, time.time() + 60)
    assert ledger.unreported(time.time()) == []
    ledger.mark_reported(payment.operation_id)
    assert ledger.unreported(time.time() + 120) == []
    ledger.report_again(payment.operation_id)
    assert [p.operation_id for p in ledger.unreported(time.time())] == [payment.operation_id]


async def test_the_http_api_answers_by_operation_by_key_and_by_order(service: str) -> None:
    client = PaymentsClient(service, TOKEN)
    accepted = await client.refund(order())
    operation = accepted.payment.operation_id
    assert accepted.created and accepted.payment.status is PaymentStatus.PENDING
    assert await client.payment(operation) == accepted.payment
    assert await client.payment_by_key("run-1:refund") == accepted.payment
    assert await client.payments("A-1") == [accepted.payment]
    assert await client.payments("A-2") == []
    assert await client.payment("pay-nope") is None
    assert await client.payment_by_key("nope") is None


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"{", 400, "Invalid JSON"),
        (b'{"idempotency_key": "k"}', 400, "run_id: Field required"),
        (
            b'{"idempotency_key": "k", "run_id": "r", "order_id": "A-1", "amount_cents": -5}',
            400,
            "amount_cents: Input should be greater than 0",
        ),
        (b"x" * 70_000, 413, "a body is at most 65536 bytes"),
    ],
)
def test_a_bad_request_gets_one_line_that_says_what_to_fix(
    service: str, body: bytes, status: int, message: str
) -> None:
    request = urllib.request.Request(
        f"{service}/refunds",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    refusal = json.loads(caught.value.read())
    assert caught.value.code == status
    assert refusal["code"] == ("too_large" if status == 413 else "bad_request")
    assert message in refusal["message"]
    assert "\n" not in refusal["message"]


def test_asking_for_a_key_with_no_payment_voids_it_so_a_late_request_cannot_pay(
    ledger: PaymentLedger,
) -> None:
    assert ledger.void_unpaid("run-1:refund") is None
    with pytest.raises(PaymentsError, match="was voided") as refused:
        ledger.refund(order(), settle_after=0)
    assert refused.value.code == "key_voided"
    assert ledger.payments() == []


def test_asking_for_a_key_that_paid_returns_the_payment_and_voids_nothing(
    ledger: PaymentLedger,
) -> None:
    paid = ledger.refund(order(), settle_after=0).payment
    assert ledger.void_unpaid("run-1:refund") == paid
    assert ledger.refund(order(), settle_after=0).payment == paid


async def test_the_void_endpoint_answers_with_the_payment_or_none(service: str) -> None:
    client = PaymentsClient(service, TOKEN)
    assert await client.void_unpaid("k-1") is None
    accepted = await client.refund(order(key="k-2"))
    assert await client.void_unpaid("k-2") == accepted.payment
    with pytest.raises(PaymentsError, match="was voided"):
        await client.refund(order(key="k-1"))
