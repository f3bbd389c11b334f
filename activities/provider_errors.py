"""Turning scenario and provider failures into Temporal failures that carry our error codes."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import structlog
from temporalio.exceptions import ApplicationError

from activities.llm import ProviderConfigError, ProviderError
from harness.core.errors import ErrorCode, is_retryable
from scenarios import UnknownScenarioError

log = structlog.get_logger()


RATE_LIMIT_BASE_SECONDS = 1.0
RATE_LIMIT_CAP_SECONDS = 60.0
RATE_LIMIT_JITTER = 0.5
"""A rate-limited call waits what the provider asked (or 1, 2, 4 ... 60 s) plus up to half as
much again, drawn at random, so a fleet of workers never comes back in lockstep."""


def rate_limit_delay(
    retry_after: float | None, attempt: int, draw: Callable[[], float] = random.random
) -> timedelta:
    base = retry_after
    if base is None:
        base = min(RATE_LIMIT_CAP_SECONDS, RATE_LIMIT_BASE_SECONDS * 2 ** max(attempt - 1, 0))
    return timedelta(seconds=base * (1 + RATE_LIMIT_JITTER * draw()))


OUTAGE_BASE_SECONDS = 5.0
OUTAGE_CAP_SECONDS = 120.0
OUTAGE_JITTER = 0.5
"""A provider outage (a 5xx that is no rate limit) waits 5, 10, 20 ... 120 s plus up to half as
much again: longer than a rate limit, since a server that is down seldom recovers in a second,
and jittered alike. A `retry-after` it sends is honoured as a rate limit's is."""


def outage_delay(
    retry_after: float | None, attempt: int, draw: Callable[[], float] = random.random
) -> timedelta:
    base = retry_after
    if base is None:
        base = min(OUTAGE_CAP_SECONDS, OUTAGE_BASE_SECONDS * 2 ** max(attempt - 1, 0))
    return timedelta(seconds=base * (1 + OUTAGE_JITTER * draw()))


def provider_failure(error: ProviderError, attempt: int) -> ApplicationError:
    delay = timedelta(seconds=error.retry_after) if error.retry_after is not None else None
    if error.code is ErrorCode.RATE_LIMITED:
        delay = rate_limit_delay(error.retry_after, attempt)
    elif error.code is ErrorCode.PROVIDER_UNAVAILABLE:
        delay = outage_delay(error.retry_after, attempt)
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
