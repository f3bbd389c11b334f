"""When a tool call's attempts really ran, by the activity's own clock.

The workflow sees an activity's retries only when the last attempt ends, and its own clock
moves only with workflow tasks; so each attempt times itself, and a retry passes the starts of
the retries before it to the next one in its heartbeat details, which Temporal keeps across
attempts. Only a retry heartbeats for this: a call that succeeds first time costs nothing.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from temporalio import activity
from temporalio.exceptions import ApplicationError

from harness.engine.messages import AttemptTiming, RetryHeartbeat


class AttemptClock:
    """Times the running attempt from when Temporal started it (the server's time, as in the
    history's started event, unless this worker's clock is behind it) to its result;
    `details` are what its heartbeats must carry."""

    def __init__(self, earlier_attempts: int = 0, *, from_now: bool = False) -> None:
        """`earlier_attempts`: the call's attempts before this activity (in a group of cheap
        calls), so this one counts on from them; `from_now`: time a call that starts inside
        the activity, not the activity itself."""
        info = activity.info()
        now = datetime.now(UTC)
        self.attempt = info.attempt + earlier_attempts
        self.started_at = now if from_now else min(info.started_time.astimezone(UTC), now)
        self._started = time.perf_counter() - (now - self.started_at).total_seconds()
        self._retries = RetryHeartbeat.read(info.heartbeat_details)
        if self.attempt > 1:
            self._retries[self.attempt] = self.started_at
            if not info.is_local:
                activity.heartbeat(*self.details)

    @property
    def details(self) -> tuple[object, ...]:
        if not self._retries:
            return ()
        return (RetryHeartbeat(retries=self._retries),)

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self._started) * 1000

    def timing(self) -> AttemptTiming:
        elapsed = self.elapsed_ms()
        return AttemptTiming(
            started_at=self.started_at,
            finished_at=self.started_at + timedelta(milliseconds=elapsed),
            retries=dict(self._retries),
        )

    def stamped(self, error: ApplicationError) -> ApplicationError:
        """`error` again, its details carrying this attempt's timing for the workflow."""
        first = error.details[0] if error.details and isinstance(error.details[0], dict) else {}
        return ApplicationError(
            error.message,
            {**first, "timing": self.timing().model_dump(mode="json")},
            type=error.type,
            non_retryable=error.non_retryable,
            next_retry_delay=error.next_retry_delay,
            category=error.category,
        )
