"""Where an activity runs, and how its failure reaches the workflow: a local activity in the
run's own worker (no task-queue round trip), a regular one on the run's task queue, or one on
the LLM queue for model calls (runs recorded before that queue: their own)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, FailureError, RetryState, TimeoutError

from harness.core.errors import ErrorCode
from harness.engine.contracts import llm_task_queue
from workflows.patches import LLM_QUEUE_PATCH, LOCAL_FAILURES_PATCH

R = TypeVar("R")

SHORT_RETRY = RetryPolicy(
    maximum_attempts=3, non_retryable_error_types=[ErrorCode.UNKNOWN_SCENARIO.value]
)


def local_failures_are_activity_errors() -> bool:
    """Whether every failure of a local activity reaches its caller as an ActivityError, as a
    queued activity's does (runs since the patch; see _as_activity_error). Before it, an unknown
    scenario, a failed check, a local tool's or a cheap group's failure failed the workflow
    (Temporal status Failed, no RunResult) instead of the phase or the node.

    Each workflow that makes local activities asks first thing in its first task (as for
    llm_queue); later calls return that decision, whatever task they are made in."""
    return workflow.patched(LOCAL_FAILURES_PATCH)


async def local_activity(
    name: str, argument: Any, result_type: type[R], *, every_failure: bool = False, **options: Any
) -> R:
    """A local activity whose failure reaches the caller as an ActivityError: its timeout
    always, any other failure when `every_failure` (memory calls since the memory patch) or
    in runs since the patch for every local failure (see _as_activity_error)."""
    try:
        result: R = await workflow.execute_local_activity(
            name, argument, result_type=result_type, **options
        )
    except ActivityError:
        raise
    except TimeoutError as bare:
        raise _as_activity_error(bare, name) from bare
    except FailureError as bare:
        if not (every_failure or local_failures_are_activity_errors()):
            raise
        raise _as_activity_error(bare, name) from bare
    return result


async def nearby_or_queued(
    name: str,
    argument: Any,
    result_type: type[R],
    *,
    local: bool,
    timeout: timedelta,
    summary: str,
    patience: timedelta | None = None,
    retry: RetryPolicy = SHORT_RETRY,
    every_failure: bool = False,
) -> R:
    """A short read or write of the harness's own stores: a local activity in the run's own
    worker (no task-queue round trip) when `local`, else a regular one, as runs recorded before
    made it. Retried as `retry` says; `patience` bounds all its attempts together.

    A local activity's failure always reaches the caller as an ActivityError when
    `every_failure` (runs since the memory patch) or since the patch for every local failure;
    before, only its timeout does (see _as_activity_error)."""
    if local:
        return await local_activity(
            name,
            argument,
            result_type,
            every_failure=every_failure,
            start_to_close_timeout=timeout,
            schedule_to_close_timeout=patience,
            retry_policy=retry,
            summary=summary,
        )
    queued: R = await workflow.execute_activity(
        name,
        argument,
        result_type=result_type,
        start_to_close_timeout=timeout,
        schedule_to_close_timeout=patience,
        retry_policy=retry,
        summary=summary,
    )
    return queued


def _as_activity_error(bare: FailureError, name: str) -> ActivityError:
    """An ActivityError for a local activity's bare failure, the cause being what counts (see
    failures.ActivityFailure and failures.raise_if_cancelled).

    Seen with temporalio 1.35 (issue 32, F2): a local activity that failed with an
    ApplicationError after its attempts raises that ApplicationError, bare, live and on replay,
    so `except ActivityError` let a store's StoreError fail the run (Temporal status Failed).
    One that timed out raises an ActivityError live, but a bare TimeoutError when its marker is
    replayed, so a run that went on live did not replay (TMPRL1100). A timeout is wrapped for
    every run: that is what the run saw live. Other failures only for runs since the memory
    patch (memory calls) or the patch for every local failure (LOCAL_FAILURES_PATCH): a run
    before it failed on them, and its history must go on failing the same way."""
    return ActivityError(
        "Activity task failed",
        scheduled_event_id=0,
        started_event_id=0,
        identity="",
        activity_type=name,
        activity_id="",
        retry_state=RetryState.TIMEOUT if isinstance(bare, TimeoutError) else None,
    )


def llm_queue() -> str | None:
    """The task queue of model calls (see harness.engine.contracts.llm_task_queue); runs recorded
    before it make them on their own queue.

    Each workflow asks first thing in its first task. A patch first asked for just after a
    local activity resolved is not replay-safe: live, the local activity may have outlasted its
    workflow task (so the marker lands in the next task), while replay resolves it at once,
    still in the first task, where no marker is found."""
    if workflow.patched(LLM_QUEUE_PATCH):
        return llm_task_queue(workflow.info().task_queue)
    return None
