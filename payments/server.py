"""The payment service's HTTP API over its ledger (standard library `http.server`, one thread
per request; the ledger's transactions keep the threads apart).

    GET  /health                         {"status": "ok"}
    POST /refunds                        RefundOrder -> RefundAccepted (201 new, 200 same key)
    POST /payments/void                  KeyQuery -> KeyAnswer: the key's payment, or void it
    GET  /payments[?order_id=|?idempotency_key=]   [Payment, ...]
    GET  /payments/OPERATION_ID          Payment, or 404

Every endpoint but `/health` needs `Authorization: Bearer TOKEN`, the token of
`payments.secret.payments_secret`, compared in constant time; without it the answer is 401
unauthorized and nothing is read or done. A body is read only up to MAX_BODY_BYTES, whatever
`Content-Length` claims: a missing, negative, malformed or chunked length is 400 bad_request and
a longer one 413 too_large, answered before any of the body is read, and the connection is
closed so the unread rest is never taken for another request.

Refusals carry an ApiError body: 400 bad_request, 401 unauthorized, 404 not_found or
unknown_charge, 409 key_reused or key_voided, 413 too_large, 422 over_refund.
"""

from __future__ import annotations

import hmac
import json
import logging
import time
import urllib.parse
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from payments.api import (
    BAD_REQUEST,
    KEY_REUSED,
    KEY_VOIDED,
    NOT_FOUND,
    OVER_REFUND,
    TOO_LARGE,
    UNAUTHORIZED,
    UNKNOWN_CHARGE,
    ApiError,
    KeyAnswer,
    KeyQuery,
    PaymentsError,
    PaymentStatus,
    RefundOrder,
)
from payments.ledger import PaymentLedger

log = logging.getLogger(__name__)
_M = TypeVar("_M", bound=BaseModel)

MAX_BODY_BYTES = 64 * 1024
SOCKET_TIMEOUT_SECONDS = 30.0
"""A client that stops sending mid-request holds its thread this long at most."""
OPEN_PATHS = frozenset({"/health"})
_STATUS_OF = {
    BAD_REQUEST: HTTPStatus.BAD_REQUEST,
    UNAUTHORIZED: HTTPStatus.UNAUTHORIZED,
    TOO_LARGE: HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
    NOT_FOUND: HTTPStatus.NOT_FOUND,
    UNKNOWN_CHARGE: HTTPStatus.NOT_FOUND,
    KEY_REUSED: HTTPStatus.CONFLICT,
    KEY_VOIDED: HTTPStatus.CONFLICT,
    OVER_REFUND: HTTPStatus.UNPROCESSABLE_ENTITY,
}


@dataclass(frozen=True)
class ServiceTiming:
    settle_seconds: float = 0.5
    """How long a refund stays pending before it is paid and reported."""
    hold_response_seconds: float = 0.0
    """For crash tests: answer `POST /refunds` this long after the payment is committed, so a
    caller can die between the payment and its answer."""


def serve(
    ledger: PaymentLedger, host: str, port: int, timing: ServiceTiming, secret: str
) -> ThreadingHTTPServer:
    """A server bound to (host, port) that answers callers bearing `secret`; the caller runs
    `serve_forever` and `shutdown`."""

    class Handler(_PaymentsHandler):
        pass

    Handler.ledger = ledger
    Handler.timing = timing
    Handler.expected_authorization = f"Bearer {secret}".encode()
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


class _PaymentsHandler(BaseHTTPRequestHandler):
    ledger: PaymentLedger
    timing: ServiceTiming
    expected_authorization: bytes
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT_SECONDS

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if self._has_body():  # never read: close rather than parse it as the next request
            self.close_connection = True
        if not self._authorized(url.path):
            return
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        if url.path == "/health":
            self._send(HTTPStatus.OK, {"status": "ok"})
        elif url.path == "/payments":
            if "idempotency_key" in query:
                found = self.ledger.payment_by_key(query["idempotency_key"])
                listed = [found] if found is not None else []
            else:
                listed = self.ledger.payments(query.get("order_id"))
            self._send(HTTPStatus.OK, [p.model_dump(mode="json") for p in listed])
        elif url.path.startswith("/payments/"):
            operation_id = urllib.parse.unquote(url.path.removeprefix("/payments/"))
            payment = self.ledger.payment(operation_id)
            if payment is None:
                self._refuse(NOT_FOUND, f"no payment '{operation_id}'")
            else:
                self._send(HTTPStatus.OK, payment.model_dump(mode="json"))
        else:
            self._refuse(NOT_FOUND, f"no resource {url.path}")

    def do_POST(self) -> None:
        if not self._authorized(urllib.parse.urlsplit(self.path).path):
            return
        if urllib.parse.urlsplit(self.path).path == "/payments/void":
            query = self._body(KeyQuery)
            if query is not None:
                payment = self.ledger.void_unpaid(query.idempotency_key)
                self._send(HTTPStatus.OK, KeyAnswer(payment=payment).model_dump(mode="json"))
            return
        if urllib.parse.urlsplit(self.path).path != "/refunds":
            self.close_connection = True  # its body is not read
            self._refuse(NOT_FOUND, f"cannot POST {self.path}")
            return
        order = self._body(RefundOrder)
        if order is None:
            return
        try:
            accepted = self.ledger.refund(order, time.time() + self.timing.settle_seconds)
        except PaymentsError as error:
            self._refuse(error.code, error.message)
            return
        payment = accepted.payment
        if accepted.created:
            log.info(
                "paid %s: %s cents on %s",
                payment.operation_id,
                payment.amount_cents,
                payment.order_id,
            )
        elif payment.status is not PaymentStatus.PENDING:
            self.ledger.report_again(payment.operation_id)
        if self.timing.hold_response_seconds:
            time.sleep(self.timing.hold_response_seconds)
        status = HTTPStatus.CREATED if accepted.created else HTTPStatus.OK
        self._send(status, accepted.model_dump(mode="json"))

    def _authorized(self, path: str) -> bool:
        """Whether the request bears the token (or needs none); refused 401 otherwise, with
        nothing of the request read beyond its headers. The comparison takes the same time
        wherever the given value first differs, so timing cannot reveal the token."""
        if path in OPEN_PATHS:
            return True
        given = self.headers.get_all("Authorization") or []
        if len(given) == 1 and hmac.compare_digest(
            given[0].strip().encode(errors="replace"), self.expected_authorization
        ):
            return True
        self.close_connection = True  # any body stays unread
        log.warning(
            "refused %s %s from %s: no valid token", self.command, path, self.client_address[0]
        )
        self._refuse(
            UNAUTHORIZED,
            "this endpoint needs the header 'Authorization: Bearer TOKEN' with the payment "
            "service's token (HARNESS_PAYMENTS_SECRET, or payments.secret in the state directory)",
        )
        return False

    def _has_body(self) -> bool:
        return "Content-Length" in self.headers or "Transfer-Encoding" in self.headers

    def _body_length(self) -> int | None:
        """The body's length if it can be read within the bound; else None, refused and the
        connection marked to close, before any of the body is read."""
        lengths = self.headers.get_all("Content-Length") or []
        if "Transfer-Encoding" in self.headers or len(lengths) != 1:
            self.close_connection = True
            self._refuse(
                BAD_REQUEST,
                "send the body with exactly one Content-Length header (no chunked encoding)",
            )
            return None
        text = lengths[0].strip()
        if not (text.isascii() and text.isdigit()):
            self.close_connection = True
            self._refuse(BAD_REQUEST, "Content-Length must be a whole number of bytes")
            return None
        if len(text) > len(str(MAX_BODY_BYTES)) or int(text) > MAX_BODY_BYTES:
            self.close_connection = True
            self._refuse(TOO_LARGE, f"a body is at most {MAX_BODY_BYTES} bytes")
            return None
        return int(text)

    def _body(self, model: type[_M]) -> _M | None:
        length = self._body_length()
        if length is None:
            return None
        data = self.rfile.read(length)
        if len(data) < length:  # the client stopped sending (or timed out): nothing to answer
            self.close_connection = True
            self._refuse(BAD_REQUEST, "the body ended before its Content-Length")
            return None
        try:
            return model.model_validate_json(data)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in error.errors()
            )
            self._refuse(BAD_REQUEST, problems)
            return None

    def _refuse(self, code: str, message: str) -> None:
        status = _STATUS_OF.get(code, HTTPStatus.BAD_REQUEST)
        self._send(status, ApiError(code=code, message=message).model_dump())

    def _send(self, status: HTTPStatus, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status is HTTPStatus.UNAUTHORIZED:
            self.send_header("WWW-Authenticate", 'Bearer realm="payments"')
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)
