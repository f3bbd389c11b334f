"""Finding F5: the payment service authenticates its callers, reads bodies within a hard bound,
and no one who can guess an idempotency key can void or read another run's payment.

The service here is its own HTTP server over a fresh ledger in this process (the same code that
`python -m payments` serves); test_payment_service_secret.py starts the real process."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from activities.llm import ScriptedProvider
from harness.core.errors import ErrorCode, ToolError
from payments.api import (
    MAX_KEY_CHARS,
    NotAuthorizedError,
    PaymentsClient,
    RefundOrder,
    idempotency_key,
)
from payments.ledger import PaymentLedger
from payments.server import MAX_BODY_BYTES, ServiceTiming, serve
from payments.shop import SHOP_CHARGES
from scenarios.base import ToolContext
from scenarios.refunds import SCENARIO as REFUNDS

TOKEN = "the-payment-service-token-of-these-tests"
ORDER = {"idempotency_key": "k-1", "run_id": "run-1", "order_id": "A-1001", "amount_cents": 6480}
FLOOD_BYTES = 64 * 1024 * 1024
"""Far more than loopback's socket buffers hold: what was sent and not read shows."""


@pytest.fixture
def ledger(tmp_path: Path) -> PaymentLedger:
    ledger = PaymentLedger(tmp_path / "payments.db")
    ledger.seed(SHOP_CHARGES)
    return ledger


@pytest.fixture
def service(ledger: PaymentLedger) -> Iterator[str]:
    server = serve(ledger, "127.0.0.1", 0, ServiceTiming(settle_seconds=3600), TOKEN)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def call(
    service: str, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(service + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_refund_without_token_is_refused_401(service: str, ledger: PaymentLedger) -> None:
    status, refusal = call(service, "POST", "/refunds", ORDER)
    assert status == 401 and refusal["code"] == "unauthorized"
    assert "Authorization: Bearer" in refusal["message"]
    assert ledger.payments() == []


@pytest.mark.parametrize(
    "token",
    [
        "wrong",
        TOKEN[:-1] + "X",  # the same length, one character off
        TOKEN + "X",
        "",
    ],
)
def test_refund_with_a_wrong_token_is_refused_401(
    service: str, ledger: PaymentLedger, token: str
) -> None:
    status, refusal = call(service, "POST", "/refunds", ORDER, token=token)
    assert status == 401 and refusal["code"] == "unauthorized"
    assert TOKEN not in json.dumps(refusal)
    assert ledger.payments() == []


def test_a_token_in_another_scheme_is_refused_401(service: str) -> None:
    request = urllib.request.Request(
        f"{service}/payments", headers={"Authorization": f"Basic {TOKEN}"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 401
    assert refused.value.headers["WWW-Authenticate"].startswith("Bearer")


def test_listing_payments_needs_the_token(service: str) -> None:
    assert call(service, "POST", "/refunds", ORDER, token=TOKEN)[0] == 201
    for path in ("/payments", "/payments?order_id=A-1001", "/payments?idempotency_key=k-1"):
        status, refusal = call(service, "GET", path)
        assert (status, refusal["code"]) == (401, "unauthorized"), path
        assert "A-1001" not in json.dumps(refusal)
    status, listed = call(service, "GET", "/payments", token=TOKEN)
    assert status == 200 and [p["order_id"] for p in listed] == ["A-1001"]


def test_reading_or_voiding_by_operation_or_key_needs_the_token(
    service: str, ledger: PaymentLedger
) -> None:
    _, accepted = call(service, "POST", "/refunds", ORDER, token=TOKEN)
    operation = accepted["payment"]["operation_id"]
    assert call(service, "GET", f"/payments/{operation}")[0] == 401
    assert call(service, "POST", "/payments/void", {"idempotency_key": "k-2"})[0] == 401
    assert call(service, "GET", "/nowhere")[0] == 401  # not even what exists is told
    assert call(service, "GET", f"/payments/{operation}", token=TOKEN)[0] == 200
    order = RefundOrder.model_validate({**ORDER, "idempotency_key": "k-2", "order_id": "A-1002"})
    assert ledger.refund(order, settle_after=0).created  # k-2 was not voided by the refusal


def test_health_is_open_without_a_token(service: str) -> None:
    assert call(service, "GET", "/health") == (200, {"status": "ok"})


def test_the_client_sends_the_token_and_a_client_without_it_is_refused(service: str) -> None:
    async def both() -> None:
        assert await PaymentsClient(service, TOKEN).payments() == []
        with pytest.raises(NotAuthorizedError):
            await PaymentsClient(service, "x" * 32).payments()

    asyncio.run(both())


# --- bodies are read within a bound, whatever Content-Length says ----------------------------


@pytest.fixture
def flood_service(service: str) -> Any:
    """POST /refunds with the given headers, then up to FLOOD_BYTES of body while reading the
    answer: the answer, and how many body bytes the service let in before it stopped."""
    host, port = service.removeprefix("http://").split(":")

    def run(headers: str, token: str | None = TOKEN) -> tuple[bytes, int]:
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        sock = socket.create_connection((host, int(port)), timeout=60)
        head = f"POST /refunds HTTP/1.1\r\nHost: {host}\r\n{auth}{headers}\r\n"
        sock.sendall(head.encode())
        sent = 0

        def push() -> None:
            nonlocal sent
            chunk = b"x" * 65536
            try:
                while sent < FLOOD_BYTES:
                    sent += sock.send(chunk)
                sock.shutdown(socket.SHUT_WR)
            except OSError:  # the service closed: the rest is never read
                pass

        pusher = threading.Thread(target=push)
        pusher.start()
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except OSError:
            pass
        pusher.join()
        sock.close()
        return answer, sent

    return run


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def refusal_of(answer: bytes) -> dict[str, str]:
    body: dict[str, str] = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    return body


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ("Content-Length: -1\r\n", 400, "bad_request"),
        ("Content-Length: 1e3\r\n", 400, "bad_request"),
        ("Content-Length: 10\r\nContent-Length: 20\r\n", 400, "bad_request"),
        ("Transfer-Encoding: chunked\r\n", 400, "bad_request"),
        (f"Content-Length: {FLOOD_BYTES}\r\n", 413, "too_large"),
        (f"Content-Length: {'9' * 5000}\r\n", 413, "too_large"),
    ],
)
def test_negative_content_length_is_refused_without_reading_the_body(
    flood_service: Any, ledger: PaymentLedger, headers: str, status: int, code: str
) -> None:
    answer, sent = flood_service(headers)
    assert status_of(answer) == status and refusal_of(answer)["code"] == code
    assert b"Connection: close" in answer
    # The service answered and closed without taking the body: most of it was never sent.
    assert sent < FLOOD_BYTES // 2
    assert ledger.payments() == []


def test_a_body_without_a_token_is_refused_401_without_reading_it(flood_service: Any) -> None:
    answer, sent = flood_service(f"Content-Length: {MAX_BODY_BYTES}\r\n", token=None)
    assert status_of(answer) == 401
    assert sent < FLOOD_BYTES // 2


def test_a_post_without_content_length_is_refused_400(service: str) -> None:
    host, port = service.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(
            f"POST /refunds HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert status_of(answer) == 400 and "Content-Length" in refusal_of(answer)["message"]


# --- guessed idempotency keys ----------------------------------------------------------------


def tool_context(payments: PaymentsClient, run_id: str) -> ToolContext:
    return ToolContext(
        run_id=run_id,
        node_id="refund",
        attempt=1,
        writer=ScriptedProvider(),
        services={"payments": payments},
    )


async def test_a_guessed_idempotency_key_cannot_void_or_read_another_runs_payment(
    service: str,
) -> None:
    attacker = PaymentsClient(service, TOKEN)
    # Before the victim's refund is sent, its key as anyone could spell it is voided...
    assert await attacker.void_unpaid("run-victim:refund") is None
    tool = REFUNDS.tool("submit_refund")
    assert tool is not None
    victim = tool_context(PaymentsClient(service, TOKEN), "run-victim")
    arguments = {"order_id": "A-1001", "amount_cents": 6480, "reason": "damaged"}
    started = await tool.call(tool.arguments.model_validate(arguments), victim)
    # ...and the victim's refund is paid all the same, under a key no guess names.
    assert isinstance(started, dict)
    key = started["idempotency_key"]
    assert isinstance(key, str) and key != "run-victim:refund"
    assert await attacker.payment_by_key("run-victim:refund") is None
    (paid,) = await attacker.payments("A-1001")
    assert paid.run_id == "run-victim" and paid.idempotency_key == key
    # A key made with another token is not the victim's key either.
    assert (
        PaymentsClient(service, "another-token-of-32-characters!!").idempotency_key(
            "run-victim", "refund"
        )
        != key
    )


async def test_a_reused_key_with_other_content_is_refused_409(service: str) -> None:
    assert call(service, "POST", "/refunds", ORDER, token=TOKEN)[0] == 201
    for other in ({"run_id": "run-thief"}, {"amount_cents": 1}, {"order_id": "A-1002"}):
        status, refusal = call(service, "POST", "/refunds", {**ORDER, **other}, token=TOKEN)
        assert (status, refusal["code"]) == (409, "key_reused"), other
    assert call(service, "POST", "/refunds", ORDER, token=TOKEN)[0] == 200


async def test_a_worker_with_the_wrong_token_fails_its_refund_as_auth_failed(
    service: str,
) -> None:
    tool = REFUNDS.tool("submit_refund")
    assert tool is not None
    context = tool_context(PaymentsClient(service, "not-the-token-but-long-enough"), "run-1")
    arguments = {"order_id": "A-1001", "amount_cents": 6480, "reason": "damaged"}
    with pytest.raises(ToolError) as refused:
        await tool.call(tool.arguments.model_validate(arguments), context)
    assert refused.value.code is ErrorCode.AUTH_FAILED
    assert "not-the-token" not in refused.value.message


def test_a_refund_key_is_the_same_for_a_node_and_unguessable_without_the_token() -> None:
    key = idempotency_key(TOKEN, "run-1", "refund")
    assert key == idempotency_key(TOKEN, "run-1", "refund")  # every attempt pays under it
    assert key.startswith("run-1:refund:") and key != "run-1:refund"
    others = {
        idempotency_key("another-token-of-enough-length", "run-1", "refund"),
        idempotency_key(TOKEN, "run-2", "refund"),
        idempotency_key(TOKEN, "run-1", "refund-2"),
        idempotency_key(TOKEN, "run-1:refund", ""),
    }
    assert key not in others and len(others) == 4
    long_run = "r" * 1000
    assert len(idempotency_key(TOKEN, long_run, "refund")) <= MAX_KEY_CHARS
    assert idempotency_key(TOKEN, long_run, "refund") != idempotency_key(TOKEN, long_run, "x")
