"""How a failed API call maps to an error code: retry, replan, or halt with a message to act on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from activities.llm.http_errors import (
    Endpoint,
    api_detail,
    connection_error,
    retry_after_seconds,
    status_error,
    timeout_error,
)
from harness.core.errors import ErrorClass, ErrorCode, classify

SECRET = "sk-ant-secret-7f3a"
ENDPOINT = Endpoint(
    provider="anthropic",
    base_url="https://api.anthropic.com",
    key_variable="ANTHROPIC_API_KEY",
    base_url_variable="ANTHROPIC_BASE_URL",
    secret=SECRET,
)


def _body(message: str) -> dict[str, object]:
    return {"type": "error", "error": {"type": "some_error", "message": message}}


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (429, ErrorCode.RATE_LIMITED),
        (529, ErrorCode.PROVIDER_UNAVAILABLE),
        (500, ErrorCode.PROVIDER_UNAVAILABLE),
        (502, ErrorCode.PROVIDER_UNAVAILABLE),
        (503, ErrorCode.PROVIDER_UNAVAILABLE),
        (409, ErrorCode.PROVIDER_UNAVAILABLE),
        (408, ErrorCode.TIMEOUT),
        (504, ErrorCode.TIMEOUT),
        (400, ErrorCode.REQUEST_REJECTED),
        (413, ErrorCode.REQUEST_REJECTED),
        (422, ErrorCode.REQUEST_REJECTED),
        (405, ErrorCode.REQUEST_REJECTED),
        (401, ErrorCode.AUTH_FAILED),
        (403, ErrorCode.AUTH_FAILED),
        (402, ErrorCode.AUTH_FAILED),
        (404, ErrorCode.CONFIG_INVALID),
    ],
)
def test_each_status_maps_to_the_code_that_decides_recovery(status: int, code: ErrorCode) -> None:
    assert status_error(ENDPOINT, status, {}, _body("boom")).code is code


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (429, ErrorClass.TRANSIENT),
        (500, ErrorClass.TRANSIENT),
        (422, ErrorClass.FATAL),
        (401, ErrorClass.FATAL),
    ],
)
def test_rate_limits_and_outages_retry_while_rejected_requests_and_keys_halt(
    status: int, error_class: ErrorClass
) -> None:
    assert classify(status_error(ENDPOINT, status, {}, None).code) is error_class


@pytest.mark.parametrize("status", [503, 529])
def test_an_unavailable_server_that_says_when_to_come_back_is_a_rate_limit(status: int) -> None:
    error = status_error(ENDPOINT, status, {"Retry-After": "3"}, _body("try later"))
    assert (error.code, error.retry_after) == (ErrorCode.RATE_LIMITED, 3.0)


def test_an_outage_that_sends_a_retry_after_keeps_it() -> None:
    error = status_error(ENDPOINT, 502, {"Retry-After": "4"}, _body("bad gateway"))
    assert (error.code, error.retry_after) == (ErrorCode.PROVIDER_UNAVAILABLE, 4.0)


@pytest.mark.parametrize(
    "body",
    [
        {"error": {"message": "Internal error", "param": "response_format"}},
        _body("unsupported value for response_format: json_schema"),
    ],
)
def test_a_server_error_that_names_a_parameter_is_a_rejected_request(body: object) -> None:
    error = status_error(ENDPOINT, 500, {"Retry-After": "1"}, body)
    assert error.code is ErrorCode.REQUEST_REJECTED and error.retry_after is None
    assert "does not accept 'response_format'" in error.message


def test_a_rejected_request_carries_the_servers_message_and_what_to_change() -> None:
    error = status_error(ENDPOINT, 400, {}, _body("model does not support images"))
    assert error.message.startswith(
        "anthropic at https://api.anthropic.com rejected the request (400): "
        "model does not support images; check that anthropic serves the models"
    )
    assert "HARNESS_PLANNER_MODEL" in error.message


def test_a_request_too_large_says_to_use_a_larger_context() -> None:
    error = status_error(ENDPOINT, 413, {}, _body("request too large"))
    assert "larger context" in error.message


OPENAI = Endpoint("openai", "http://localhost:8000/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL", "")


def test_a_refused_structured_output_parameter_points_at_the_compatibility_setting() -> None:
    body = {"error": {"message": "no", "param": "response_format"}}
    error = status_error(OPENAI, 422, {}, body)
    assert "'response_format'" in error.message and "HARNESS_OPENAI_COMPAT" in error.message


def test_another_refused_parameter_asks_for_a_model_that_accepts_it() -> None:
    body = {"error": {"message": "unsupported", "param": "temperature"}}
    error = status_error(OPENAI, 400, {}, body)
    assert "does not accept 'temperature': use a model or server that accepts it" in error.message


def test_a_rejected_key_names_the_variable_to_fix() -> None:
    error = status_error(ENDPOINT, 401, {}, _body("invalid x-api-key"))
    assert error.message.startswith("ANTHROPIC_API_KEY was rejected (401)")
    assert "https://api.anthropic.com" in error.message


def test_the_key_never_appears_in_a_message_even_when_the_server_echoes_it() -> None:
    for status in (400, 401, 403, 404, 429, 500):
        error = status_error(ENDPOINT, status, {}, _body(f"bad key {SECRET} given"))
        assert SECRET not in error.message


def test_an_unknown_model_points_at_the_model_variables_and_the_base_url() -> None:
    error = status_error(ENDPOINT, 404, {}, _body("model: claude-nope"))
    assert "claude-nope" in error.message
    assert "HARNESS_PLANNER_MODEL" in error.message and "ANTHROPIC_BASE_URL" in error.message


def test_a_retryable_error_carries_the_servers_retry_after() -> None:
    error = status_error(ENDPOINT, 429, {"Retry-After": "7"}, None)
    assert error.retry_after == 7.0


def test_a_non_retryable_error_carries_no_retry_delay() -> None:
    assert status_error(ENDPOINT, 400, {"retry-after": "7"}, None).retry_after is None


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "1"}, 1.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2026 07:28:30 GMT"}, 30.0),
        ({"retry-after": "Wed, 21 Oct 2026 07:27:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "inf"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_seconds_milliseconds_or_as_a_date(
    headers: dict[str, str], seconds: float | None
) -> None:
    now = datetime(2026, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert retry_after_seconds(headers, now=now) == seconds


def test_a_call_without_an_answer_is_a_retryable_timeout_naming_the_provider() -> None:
    for error in (timeout_error(ENDPOINT, 90), connection_error(ENDPOINT)):
        assert error.code is ErrorCode.TIMEOUT
        assert "anthropic at https://api.anthropic.com" in error.message
    assert "ANTHROPIC_BASE_URL" in connection_error(ENDPOINT).message


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"error": {"message": "prompt is too long"}}, "prompt is too long"),
        ({"error": "quota exceeded"}, "quota exceeded"),
        ("upstream connect error", "upstream connect error"),
        (None, "no detail given"),
    ],
)
def test_the_detail_is_the_apis_own_error_message(body: object, detail: str) -> None:
    assert api_detail(body) == detail
