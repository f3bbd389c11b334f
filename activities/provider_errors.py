"""Turning scenario and provider failures into Temporal failures that carry our error codes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import structlog
from temporalio.exceptions import ApplicationError

from activities.llm import ProviderConfigError, ProviderError
from harness.errors import ErrorCode, is_retryable
from scenarios import UnknownScenarioError

log = structlog.get_logger()


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


@contextmanager
def as_temporal_failures(attempt: int) -> Iterator[None]:
    """Predictable failures of scenario lookup and model calls, as non-retryable or retryable
    ApplicationErrors typed with our error codes."""
    try:
        yield
    except UnknownScenarioError as error:
        raise ApplicationError(
            str(error), type=ErrorCode.UNKNOWN_SCENARIO.value, non_retryable=True
        ) from error
    except ProviderConfigError as error:
        raise config_failure(error, attempt) from error
    except ProviderError as error:
        log.warning("activity.provider_error", code=error.code.value, reason=error.message)
        raise provider_failure(error, attempt) from error
