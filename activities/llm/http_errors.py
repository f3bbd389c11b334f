"""A failed call to a model API, as a ProviderError whose code decides what recovery does.

- 429, and a 503 or 529 that says when to come back (`retry-after`), are RATE_LIMITED: retried
  after the delay the server asked for.
- Other 5xx, 529 (overloaded) and 409 are PROVIDER_UNAVAILABLE: an outage, retried with a
  longer backoff of its own (activities.provider_errors). 529 is Anthropic's "overloaded": no
  limit of ours was reached, so it waits like an outage unless the server says how long.
- Timeouts (408, 499, 504, no answer in time, no connection) are TIMEOUT, retried.
- 400, 413, 422 and every other 4xx, and a 5xx whose body names a request parameter, are
  REQUEST_REJECTED: the same request would fail again, so the run halts with the server's
  message and a hint of what to change; it is never planned again with the same request.
- 401/403/402 are AUTH_FAILED and 404 (unknown model or wrong base URL) is CONFIG_INVALID: both
  halt, since no retry or new plan can fix them.

Messages never carry the API key, even when a server echoes it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from activities.llm.base import ProviderError
from harness.core.errors import ErrorCode, is_retryable

_DETAIL_CHARS = 300
_REDACTED = "[redacted]"
_PARAMETERS = re.compile(
    r"\b(response_format|json_schema|json_object|max_completion_tokens|max_tokens|max_output_tokens"
    r"|tool_choice|parallel_tool_calls|reasoning_effort|prompt_cache_key|stream_options"
    r"|top_p|temperature|logprobs|stop_sequences|thinking|output_format)\b"
)
"""Request parameters a server may name when it cannot take them (OpenAI's and Anthropic's)."""
_OUTAGE_WITH_DELAY = (503, 529)
_COMPAT_PARAMETERS = frozenset(
    {"response_format", "json_schema", "json_object", "max_completion_tokens", "tool_choice"}
)
"""What an OpenAI-compatible server may refuse that another HARNESS_OPENAI_COMPAT mode avoids."""


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
    detail = endpoint.redact(api_detail(body))
    retry_after = retry_after_seconds(headers)
    code, message = _classify(endpoint, status, detail, named_parameter(body), retry_after)
    return ProviderError(code, message, retry_after=retry_after if is_retryable(code) else None)


def _classify(
    endpoint: Endpoint, status: int, detail: str, parameter: str | None, retry_after: float | None
) -> tuple[ErrorCode, str]:
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
    if status >= 500 and parameter is None:
        if status in _OUTAGE_WITH_DELAY and retry_after is not None:
            return ErrorCode.RATE_LIMITED, (
                f"{where} asks to come back in {retry_after:g} s ({status}): {detail}"
            )
        return ErrorCode.PROVIDER_UNAVAILABLE, f"{where} is unavailable ({status}): {detail}"
    if status == 409:
        return ErrorCode.PROVIDER_UNAVAILABLE, f"{where} answered a conflict (409): {detail}"
    return ErrorCode.REQUEST_REJECTED, (
        f"{where} rejected the request ({status}): {detail}; "
        + rejection_hint(endpoint, status, detail, parameter)
    )


def rejection_hint(endpoint: Endpoint, status: int, detail: str, parameter: str | None) -> str:
    """What to change so that the server accepts the request: the same one will fail again."""
    if parameter is not None:
        fix = (
            "set HARNESS_OPENAI_COMPAT to a mode that does not send it"
            if endpoint.provider == "openai" and parameter in _COMPAT_PARAMETERS
            else "use a model or server that accepts it"
        )
        return f"the server does not accept '{parameter}': {fix}"
    if status == 413 or "context" in detail.lower() or "too long" in detail.lower():
        return "the prompt is too large for the model: use a model with a larger context"
    return (
        f"check that {endpoint.provider} serves the models named by HARNESS_PLANNER_MODEL, "
        f"HARNESS_WORKER_MODEL and HARNESS_JUDGE_MODEL with these settings, and "
        f"{endpoint.base_url_variable}"
    )


def named_parameter(body: object) -> str | None:
    """The request parameter an error body names: its `param` field (OpenAI's), else a known
    parameter in its message."""
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        param = error.get("param")  # OpenAI's names `messages` for a prompt too long: not one
        if isinstance(param, str) and _PARAMETERS.fullmatch(param):
            return param
    found = _PARAMETERS.search(api_detail(body))
    return found.group(1) if found else None


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
