"""Timeouts, retry policies, activity summaries and failure decoding for the workflow."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from harness.errors import ErrorCode, is_retryable, parse_error_code

CATALOG_TIMEOUT = timedelta(seconds=30)
PLAN_TIMEOUT = timedelta(minutes=3)
TOOL_TIMEOUT = timedelta(minutes=2)
CHECK_TIMEOUT = timedelta(seconds=60)

NON_RETRYABLE_CODES = [code.value for code in ErrorCode if not is_retryable(code)]

TOOL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=3,
    non_retryable_error_types=NON_RETRYABLE_CODES,
)
SIDE_EFFECT_RETRY = RetryPolicy(maximum_attempts=1)
TOOL_HEARTBEAT_TIMEOUT = timedelta(seconds=30)

PLAN_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_attempts=3,
    non_retryable_error_types=[*NON_RETRYABLE_CODES, "UNKNOWN_SCENARIO"],
)
SHORT_RETRY = RetryPolicy(maximum_attempts=3, non_retryable_error_types=["UNKNOWN_SCENARIO"])

_SUMMARY_VALUE_CHARS = 40
_SUMMARY_CHARS = 200


class ActivityFailure:
    """What a failed activity tells the workflow: a code, a message, how many attempts ran."""

    def __init__(self, error: ActivityError, max_attempts: int) -> None:
        cause = error.cause
        self.attempts = max_attempts
        if isinstance(cause, ApplicationError):
            self.type = cause.type
            self.code = parse_error_code(cause.type)
            self.message = cause.message
            details = cause.details
            if details and isinstance(details[0], dict) and "attempt" in details[0]:
                self.attempts = int(details[0]["attempt"])
        elif isinstance(cause, TimeoutError):
            self.type = ErrorCode.TIMEOUT.value
            self.code = ErrorCode.TIMEOUT
            self.message = f"timed out ({cause.type.name if cause.type else 'unknown'})"
        else:
            self.type = ErrorCode.TOOL_EXECUTION_FAILED.value
            self.code = ErrorCode.TOOL_EXECUTION_FAILED
            self.message = str(cause or error)


def tool_call_summary(node_id: str, tool: str, arguments: dict[str, JsonValue]) -> str:
    """`n3 get_population(city=Tokyo)`: what the Temporal UI shows for a node's activity."""
    shown = ", ".join(f"{name}={_short(value)}" for name, value in arguments.items())
    summary = f"{node_id} {tool}({shown})"
    return summary if len(summary) <= _SUMMARY_CHARS else summary[: _SUMMARY_CHARS - 1] + "…"


def _short(value: JsonValue) -> str:
    if isinstance(value, list):
        return f"[{len(value)} items]"
    if isinstance(value, dict):
        return f"{{{len(value)} fields}}"
    text = str(value)
    return text if len(text) <= _SUMMARY_VALUE_CHARS else text[: _SUMMARY_VALUE_CHARS - 1] + "…"
