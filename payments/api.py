"""The payment service's HTTP API: its wire models and the client a worker calls it with.

The client uses only the standard library (one blocking request per call, run in a thread so
the worker's event loop never waits on the network).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter

from payments.secret import SecretError, payments_secret

DEFAULT_PORT = 8642
DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}"
REQUEST_TIMEOUT_SECONDS = 10.0
MAX_KEY_CHARS = 400


class PaymentStatus(StrEnum):
    PENDING = "pending"
    """Accepted, and the money is committed; settlement and its callback follow."""
    PAID = "paid"
    FAILED = "failed"


class RefundOrder(BaseModel):
    """`POST /refunds`: pay back `amount_cents` on a captured charge, once per key."""

    idempotency_key: str = Field(min_length=1, max_length=MAX_KEY_CHARS)
    run_id: str = Field(min_length=1, max_length=400, description="The run told of the outcome.")
    order_id: str = Field(min_length=1, max_length=200)
    amount_cents: int = Field(gt=0)


class Payment(BaseModel):
    """One line of the ledger: a refund the service accepted, and where it stands."""

    operation_id: str
    idempotency_key: str
    run_id: str
    order_id: str
    amount_cents: int
    status: PaymentStatus
    created_at: datetime
    settled_at: datetime | None = None
    reason: str | None = Field(default=None, description="Why a payment failed.")


class PaymentOutcome(BaseModel):
    """What the callback delivers for an operation: the refund node's `outcome`."""

    status: PaymentStatus
    operation_id: str
    order_id: str
    amount_cents: int
    idempotency_key: str | None = None
    paid_at: datetime | None = None
    reason: str | None = Field(default=None, description="Why a payment failed.")

    @classmethod
    def of(cls, payment: Payment) -> PaymentOutcome:
        return cls(
            status=payment.status,
            operation_id=payment.operation_id,
            order_id=payment.order_id,
            amount_cents=payment.amount_cents,
            idempotency_key=payment.idempotency_key,
            paid_at=payment.settled_at if payment.status is PaymentStatus.PAID else None,
            reason=payment.reason,
        )


class KeyQuery(BaseModel):
    """`POST /payments/void`: the payment under a key, or void the key if there is none."""

    idempotency_key: str = Field(min_length=1, max_length=MAX_KEY_CHARS)


class KeyAnswer(BaseModel):
    payment: Payment | None = Field(
        description="The payment under the key; None: there was none, and now there never will be."
    )


class RefundAccepted(BaseModel):
    """The answer to `POST /refunds`: the payment, and whether this request created it."""

    payment: Payment
    created: bool


class ApiError(BaseModel):
    """Every refusal: a code a program can branch on, and one line for a person."""

    code: str
    message: str


class PaymentsError(Exception):
    """The service refused a request; `code` is ApiError.code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class KeyReuseError(PaymentsError):
    """An idempotency key sent again with a different order or amount."""


class OverRefundError(PaymentsError):
    """More than is left of the charge; nothing was paid."""


class NotAuthorizedError(PaymentsError):
    """The service refused the token (401), or this process has no token to send."""


class UnavailableError(Exception):
    """The service could not be reached or answered oddly: the outcome of the call is unknown."""


KEY_REUSED = "key_reused"
KEY_VOIDED = "key_voided"
OVER_REFUND = "over_refund"
UNKNOWN_CHARGE = "unknown_charge"
BAD_REQUEST = "bad_request"
NOT_FOUND = "not_found"
UNAUTHORIZED = "unauthorized"
TOO_LARGE = "too_large"

_REFUSALS: dict[str, type[PaymentsError]] = {
    KEY_REUSED: KeyReuseError,
    OVER_REFUND: OverRefundError,
    UNAUTHORIZED: NotAuthorizedError,
}
_PAYMENTS = TypeAdapter(list[Payment])


def idempotency_key(secret: str, run_id: str, node_id: str) -> str:
    """The key a run's refund node pays under: the same for every attempt of the node, and
    unguessable without the service's token, so no one who can merely name a run can void or
    look up its refund in advance. `run:node:` stays readable in front for a person."""
    mac = hmac.new(secret.encode(), f"{run_id}\0{node_id}".encode(), hashlib.sha256)
    tail = f":{mac.hexdigest()[:32]}"
    # The MAC covers the whole run and node, so a readable part cut short keeps keys apart.
    return f"{run_id}:{node_id}"[: MAX_KEY_CHARS - len(tail)] + tail


class PaymentsClient:
    """The worker's way to the service; one instance is shared by every tool call.

    `secret` is the service's bearer token; unset, it is read (or created) the one way
    `payments.secret.payments_secret` says, at the first call rather than at construction, so a
    worker that never pays never touches the file."""

    def __init__(self, base_url: str = DEFAULT_URL, secret: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._secret = secret

    def __repr__(self) -> str:  # never the token
        return f"PaymentsClient({self.base_url!r})"

    @property
    def secret(self) -> str:
        if self._secret is None:
            try:
                self._secret = payments_secret()
            except SecretError as error:
                raise NotAuthorizedError(UNAUTHORIZED, str(error)) from None
        return self._secret

    def idempotency_key(self, run_id: str, node_id: str) -> str:
        return idempotency_key(self.secret, run_id, node_id)

    async def refund(self, order: RefundOrder) -> RefundAccepted:
        body = await self._call("POST", "/refunds", order.model_dump(mode="json"))
        return RefundAccepted.model_validate(body)

    async def payment(self, operation_id: str) -> Payment | None:
        return await self._one(f"/payments/{urllib.parse.quote(operation_id, safe='')}")

    async def payment_by_key(self, idempotency_key: str) -> Payment | None:
        query = urllib.parse.urlencode({"idempotency_key": idempotency_key})
        found = _PAYMENTS.validate_python(await self._call("GET", f"/payments?{query}"))
        return found[0] if found else None

    async def void_unpaid(self, idempotency_key: str) -> Payment | None:
        """The payment under the key, or None, after which nothing can be paid under it."""
        body = await self._call(
            "POST", "/payments/void", KeyQuery(idempotency_key=idempotency_key).model_dump()
        )
        return KeyAnswer.model_validate(body).payment

    async def payments(self, order_id: str | None = None) -> list[Payment]:
        query = f"?{urllib.parse.urlencode({'order_id': order_id})}" if order_id else ""
        return _PAYMENTS.validate_python(await self._call("GET", f"/payments{query}"))

    async def healthy(self) -> bool:
        try:
            await self._call("GET", "/health")
        except (UnavailableError, PaymentsError):
            return False
        return True

    async def _one(self, path: str) -> Payment | None:
        try:
            return Payment.model_validate(await self._call("GET", path))
        except PaymentsError as error:
            if error.code == NOT_FOUND:
                return None
            raise

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        return await asyncio.to_thread(self._blocking_call, method, path, body)

    def _blocking_call(self, method: str, path: str, body: Any) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if path != "/health":
            headers["Authorization"] = f"Bearer {self.secret}"
        request = urllib.request.Request(
            self.base_url + path, data=data, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_SECONDS) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise _refusal(error) from None
        except (OSError, ValueError) as error:
            raise UnavailableError(
                f"payment service at {self.base_url} did not answer {method} {path}: {error}"
            ) from None


def _refusal(error: urllib.error.HTTPError) -> Exception:
    if error.code >= 500:
        return UnavailableError(f"payment service failed ({error.code}): {error.reason}")
    try:
        refusal = ApiError.model_validate_json(error.read())
    except ValueError:
        return UnavailableError(f"payment service answered {error.code} without an error body")
    return _REFUSALS.get(refusal.code, PaymentsError)(refusal.code, refusal.message)
