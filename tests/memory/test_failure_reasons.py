"""What a run is told when its memory store fails: one line, bounded, with no secret; and a
failed local activity reaches the workflow the same way live and on replay."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    FailureError,
    TimeoutError,
    TimeoutType,
)

from harness.core.errors import ErrorCode
from workflows.activity_calls.failures import ActivityFailure, raise_if_cancelled
from workflows.activity_calls.placement import _as_activity_error
from workflows.run_memory import REASON_CHARS, one_line


def test_a_store_failure_reason_in_the_trace_is_its_first_line() -> None:
    reason = "the memory store db failed: connection refused\n  Is the server running?"
    assert one_line(reason) == "the memory store db failed: connection refused"


def test_a_store_failure_reason_in_the_trace_is_bounded() -> None:
    said = one_line("x" * 10_000)
    assert len(said) == REASON_CHARS and said.endswith("…")


def test_a_store_failure_reason_in_the_trace_holds_no_password() -> None:
    said = one_line("cannot connect to postgresql://bob:hunter2@db:5432/memory")
    assert "hunter2" not in said and "postgresql://bob:" in said


def _wrapped(bare: FailureError) -> ActivityError:
    """As _nearby_or_queued raises it."""
    try:
        raise _as_activity_error(bare, "harness.memory_retrieve") from bare
    except ActivityError as error:
        return error


def test_a_replayed_store_failure_reads_as_the_live_one() -> None:
    bare = ApplicationError("the memory store x failed: file is not a database", type="StoreError")
    failure = ActivityFailure(_wrapped(bare), 3)
    assert failure.message == "the memory store x failed: file is not a database"
    assert failure.type == "StoreError"


def test_a_replayed_timeout_reads_as_a_timeout() -> None:
    bare = TimeoutError(
        "Activity timed out", type=TimeoutType.SCHEDULE_TO_CLOSE, last_heartbeat_details=[]
    )
    failure = ActivityFailure(_wrapped(bare), 3)
    assert failure.code is ErrorCode.TIMEOUT and failure.message == "timed out (SCHEDULE_TO_CLOSE)"


def test_a_replayed_cancellation_is_still_the_runs_cancellation() -> None:
    with pytest.raises(asyncio.CancelledError):
        raise_if_cancelled(_wrapped(CancelledError("Local Activity cancelled")))
