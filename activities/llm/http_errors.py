"""A failed call to a model API, as a ProviderError whose code decides what recovery does.

429, 529 (overloaded), 409 and other 5xx are RATE_LIMITED; timeouts (408, 499, 504, no answer in
time, no connection) are TIMEOUT: both retry, after `retry-after` when the server sends it.
401/403/402 are AUTH_FAILED and 404 (unknown model or wrong base URL) is CONFIG_INVALID: both
halt, since no retry or new plan can fix them. Other 4xx (400, 413, 422) are INVALID_ARGUMENT.
Messages never carry the API key, even when a server echoes it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from activities.llm.base import ProviderError
from harness.core.errors import ErrorCode, is_retryable

_DETAIL_CHARS = 300
_REDACTED = "[redacted]"


@dataclass(frozen=True)
class Endpoint:
    """Who was called, so that a message names what to fix."""

    provider: str
    base_url: str
    key_variable: str
    base_url_variable: str
    secret: str = field(repr=False)

    def redact(self, text: str) -> str:
        return text.replace(self.secret, _REDACTED) if self.secret else text

    def where(self) -> str:
        return f"{self.provider} at {self.base_url}"


def status_error(
    endpoint: Endpoint, status: int, headers: Mapping[str, str], body: object
) -> ProviderError:
    code, message = _classify(endpoint, status, endpoint.redact(api_detail(body)))
    retry_after = retry_after_seconds(headers) if is_retryable(code) else None
    return ProviderError(code, message, retry_after=retry_after)


def _classify(endpoint: Endpoint, status: int, detail: str) -> tuple[ErrorCode, str]:
    where = endpoint.where()
    if status in (401, 403):
        return (
            ErrorCode.AUTH_FAILED,
            f"{endpoint.key_variable} was rejected ({status}) by {where}; "
            + (
                "set it to a valid API key"
                if status == 401
                else f"the key may not use this: {detail}"
            ),
        )
    if status == 402:
        return ErrorCode.AUTH_FAILED, (
            f"the account of {endpoint.key_variable} cannot pay for requests (402) at {where}"
        )
    if status == 404:
        return ErrorCode.CONFIG_INVALID, (
            f"{where} answered 404 ({detail}); check the model names (HARNESS_PLANNER_MODEL, "
            f"HARNESS_WORKER_MODEL, HARNESS_JUDGE_MODEL) and {endpoint.base_url_variable}"
        )
    if status in (408, 499, 504):
        return ErrorCode.TIMEOUT, f"{where} timed out ({status}): {detail}"
    if status == 429:
        return ErrorCode.RATE_LIMITED, f"{where} is rate limiting requests (429): {detail}"
    if status == 529:
        return ErrorCode.RATE_LIMITED, f"{where} is overloaded (529): {detail}"
    if status == 409 or status >= 500:
        return ErrorCode.RATE_LIMITED, f"{where} failed with a server error ({status}): {detail}"
    return ErrorCode.INVALID_ARGUMENT, f"{where} rejected the request ({status}): {detail}"


def timeout_error(endpoint: Endpoint, seconds: float) -> ProviderError:
    return ProviderError(
        ErrorCode.TIMEOUT, f"{endpoint.where()} did not answer within {seconds:g} s"
    )


def connection_error(endpoint: Endpoint) -> ProviderError:
    return ProviderError(
        ErrorCode.TIMEOUT,
        f"cannot connect to {endpoint.where()}; check {endpoint.base_url_variable} and the network",
    )


def api_detail(body: object) -> str:
    """The error message of an API error body (`{"error": {"message": ...}}` in both APIs)."""
    error = body.get("error", body) if isinstance(body, dict) else body
    message = error.get("message", error) if isinstance(error, dict) else error
    text = str(message) if message not in (None, "") else "no detail given"
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 1] + "…"


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The delay a server asks for: `retry-after-ms`, or `retry-after` in seconds or as a date."""
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = _number(lowered.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) and number >= 0 else None
