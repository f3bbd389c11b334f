"""What a failed activity tells the workflow: its error code, its message, how many attempts
ran and when; and an activity the run cancelled, turned back into the run's cancellation."""

from __future__ import annotations

import asyncio
from datetime import datetime

from pydantic import ValidationError
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, TimeoutError

from harness.core.errors import ErrorCode, is_retryable, parse_error_code
from harness.core.spent import USAGE_KEY, spent_in
from harness.core.usage import TokenUsage
from harness.engine.messages import AttemptTiming, RetryHeartbeat
from workflows.patches import CHARGE_FAILED_PATCH

NON_RETRYABLE_CODES = [code.value for code in ErrorCode if not is_retryable(code)]
"""The error codes a retry cannot mend: a retry policy lists them as its non-retryable types."""


class ActivityFailure:
    """What a failed activity tells the workflow: a code, a message, how many attempts ran."""

    def __init__(self, error: ActivityError, max_attempts: int) -> None:
        cause = error.cause
        self.attempts = max_attempts
        self.timing: AttemptTiming | None = None
        self.retries: dict[int, datetime] = {}
        self.usage: TokenUsage | None = None
        """What the failed attempts' model calls cost, as the activity reported it."""
        if isinstance(cause, ApplicationError):
            self.type = cause.type
            self.code = parse_error_code(cause.type)
            self.message = cause.message
            details = cause.details
            if details and isinstance(details[0], dict) and "attempt" in details[0]:
                self.attempts = int(details[0]["attempt"])
                self.timing = _timing(details[0].get("timing"))
                self.retries = self.timing.retries if self.timing else {}
                self.usage = spent_in(details, USAGE_KEY)
        elif isinstance(cause, TimeoutError):
            self.type = ErrorCode.TIMEOUT.value
            self.code = ErrorCode.TIMEOUT
            self.message = f"timed out ({cause.type.name if cause.type else 'unknown'})"
            self.retries = RetryHeartbeat.read(cause.last_heartbeat_details)
            self.usage = spent_in(cause.last_heartbeat_details)
        else:
            self.type = ErrorCode.TOOL_EXECUTION_FAILED.value
            self.code = ErrorCode.TOOL_EXECUTION_FAILED
            self.message = str(cause or error)


def charged_usage(failure: ActivityFailure) -> TokenUsage | None:
    """What the failed activity's model calls cost, for the run to charge; None when it reported
    nothing, or in a run from before the patch that charges it (asked only when there is)."""
    if failure.usage is None or not failure.usage.total_tokens:
        return None
    return failure.usage if workflow.patched(CHARGE_FAILED_PATCH) else None


def _timing(raw: object) -> AttemptTiming | None:
    """The timing a failed attempt reported, if it reported one this code can read."""
    try:
        return AttemptTiming.model_validate(raw) if raw is not None else None
    except ValidationError:
        return None


def raise_if_cancelled(error: ActivityError) -> None:
    """An activity the run cancelled surfaces as ActivityError; turn it back into the run's
    cancellation so it ends CANCELLED, not as a failed phase."""
    if isinstance(error.cause, CancelledError):
        raise asyncio.CancelledError from error
