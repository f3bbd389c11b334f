"""Rate-limited model calls come back at jittered times: never before the provider asked, and
never all at once; an outage waits longer, jittered alike."""

from __future__ import annotations

from activities.llm import ProviderError
from activities.provider_errors import outage_delay, provider_failure, rate_limit_delay
from harness.core.errors import ErrorCode


def test_a_retry_after_is_honoured_and_stretched_by_up_to_half() -> None:
    assert rate_limit_delay(4.0, 1, lambda: 0.0).total_seconds() == 4.0
    assert rate_limit_delay(4.0, 1, lambda: 1.0).total_seconds() == 6.0


def test_without_a_retry_after_the_delay_doubles_per_attempt_up_to_a_minute() -> None:
    delays = [
        rate_limit_delay(None, attempt, lambda: 0.0).total_seconds() for attempt in range(1, 9)
    ]
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]


def test_a_fleet_rate_limited_at_once_spreads_its_retries() -> None:
    failures = [
        provider_failure(ProviderError(ErrorCode.RATE_LIMITED, "429", 2.0), 1) for _ in range(50)
    ]
    delays = {failure.next_retry_delay for failure in failures}
    assert len(delays) > 40
    assert all(d is not None and 2.0 <= d.total_seconds() <= 3.0 for d in delays)


def test_other_retryable_errors_keep_the_servers_retry_after_as_it_is() -> None:
    failure = provider_failure(ProviderError(ErrorCode.TIMEOUT, "slow", 3.0), 1)
    assert failure.next_retry_delay is not None
    assert failure.next_retry_delay.total_seconds() == 3.0


def test_an_outage_waits_longer_than_a_rate_limit_doubling_up_to_two_minutes() -> None:
    delays = [outage_delay(None, attempt, lambda: 0.0).total_seconds() for attempt in range(1, 8)]
    assert delays == [5.0, 10.0, 20.0, 40.0, 80.0, 120.0, 120.0]
    assert all(
        outage_delay(None, attempt, lambda: 0.0) > rate_limit_delay(None, attempt, lambda: 0.0)
        for attempt in range(1, 7)
    )


def test_outage_retries_are_jittered_and_honour_a_retry_after() -> None:
    failures = [
        provider_failure(ProviderError(ErrorCode.PROVIDER_UNAVAILABLE, "502"), 1) for _ in range(50)
    ]
    delays = {failure.next_retry_delay for failure in failures}
    assert len(delays) > 40
    assert all(d is not None and 5.0 <= d.total_seconds() <= 7.5 for d in delays)
    assert outage_delay(2.0, 3, lambda: 1.0).total_seconds() == 3.0
