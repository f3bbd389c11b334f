"""Turning provider failures into Temporal failures that carry our error codes."""

from __future__ import annotations

from datetime import timedelta

from temporalio.exceptions import ApplicationError

from activities.llm import ProviderConfigError, ProviderError
from harness.errors import ErrorCode, is_retryable


def provider_failure(error: ProviderError, attempt: int) -> ApplicationError:
    delay = timedelta(seconds=error.retry_after) if error.retry_after is not None else None
    return ApplicationError(
        error.message,
        {"attempt": attempt},
        type=error.code.value,
        non_retryable=not is_retryable(error.code),
        next_retry_delay=delay,
    )


def config_failure(error: ProviderConfigError, attempt: int) -> ApplicationError:
    return ApplicationError(
        str(error), {"attempt": attempt}, type=ErrorCode.CONFIG_INVALID.value, non_retryable=True
    )
