"""What a model activity's attempts spent, so that the run is charged for every one of them.

Temporal shows the workflow only an activity's last attempt. So each attempt starts from what
the attempts before it spent (read from the heartbeat details, which Temporal keeps across
attempts), and a failed attempt heartbeats the sum with its own cost before it fails, and puts
the sum in its failure's details (`{"usage": ...}`) for the workflow; a successful one adds the
sum to its reply's usage. While the call runs, its heartbeats carry the sum too, so a workflow
that sees the activity time out (a dead worker) still reads what the earlier attempts spent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.llm.charging import spent_by
from harness.core.spent import USAGE_KEY, carried, spent_in
from harness.core.usage import TokenUsage


class Spending:
    """What the attempts before this one spent, and what this attempt's failure reports."""

    def __init__(self) -> None:
        info = activity.info()
        self.earlier = spent_in(info.heartbeat_details) or TokenUsage()
        self._local = info.is_local
        self._meter: Callable[[], TokenUsage] = TokenUsage

    def metered(self, meter: Callable[[], TokenUsage]) -> None:
        """`meter` tells what this attempt's successful model calls spent so far (a tool that
        wrote twice, then failed, spent both)."""
        self._meter = meter

    @property
    def details(self) -> tuple[object, ...]:
        """What this attempt's heartbeats carry: the earlier attempts' spending, if any."""
        return _carried(self.earlier)

    def plus_earlier(self, usage: TokenUsage) -> TokenUsage:
        """A successful attempt's usage with the earlier attempts' added."""
        return self.earlier.plus(usage) if self.earlier.total_tokens else usage

    def failed(
        self, error: ApplicationError, spent: TokenUsage | None, heartbeat: Sequence[object] = ()
    ) -> ApplicationError:
        """`error` again, its details carrying what this attempt and the earlier ones spent;
        the sum is heartbeated first (with `heartbeat`, the attempt's other details), so that
        a retry starts from it."""
        total = self.earlier.plus(self._meter())
        if spent is not None:
            total = total.plus(spent)
        if not total.total_tokens:
            return error
        if not self._local:
            activity.heartbeat(*heartbeat, *_carried(total))
        first = error.details[0] if error.details and isinstance(error.details[0], dict) else {}
        return ApplicationError(
            error.message,
            {**first, **carried(total, USAGE_KEY)},
            *error.details[1:],
            type=error.type,
            non_retryable=error.non_retryable,
            next_retry_delay=error.next_retry_delay,
            category=error.category,
        )


def _carried(usage: TokenUsage) -> tuple[object, ...]:
    return (carried(usage),) if usage.total_tokens else ()


@contextmanager
def charged_attempts(spending: Spending) -> Iterator[None]:
    """An ApplicationError raised inside, caused by a failed model call, leaves with what this
    attempt and the earlier ones spent in its details."""
    try:
        yield
    except ApplicationError as error:
        cause = error.__cause__
        spent = spent_by(cause) if isinstance(cause, Exception) else None
        raise spending.failed(error, spent) from cause
