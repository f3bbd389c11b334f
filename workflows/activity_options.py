"""Timeouts, retry policies, activity summaries and failure decoding for the workflow."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from activities.tool_runner import ToolActivities
    from harness.errors import ErrorCode, is_retryable, parse_error_code
    from harness.messages import ToolCallRequest, ToolCallResult

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
LOCAL_TOOL_TIMEOUT = timedelta(seconds=10)
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


async def run_tool_call(
    request: ToolCallRequest, *, local: bool, side_effects: bool, summary: str
) -> ToolCallResult:
    """One node's tool call: a local activity for cheap in-memory tools, else a regular one."""
    if local:
        return await workflow.execute_local_activity_method(
            ToolActivities.run_tool,
            request,
            start_to_close_timeout=LOCAL_TOOL_TIMEOUT,
            retry_policy=SIDE_EFFECT_RETRY if side_effects else TOOL_RETRY,
            summary=summary,
        )
    return await workflow.execute_activity_method(
        ToolActivities.run_tool,
        request,
        start_to_close_timeout=TOOL_TIMEOUT,
        heartbeat_timeout=TOOL_HEARTBEAT_TIMEOUT,
        retry_policy=SIDE_EFFECT_RETRY if side_effects else TOOL_RETRY,
        summary=summary,
    )


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
