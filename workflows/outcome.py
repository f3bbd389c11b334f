"""How a run's ending shows in Temporal: the workflow's own status tells the run's outcome.

A run that fails (any FAILED_* phase, or BUDGET_EXHAUSTED) fails the workflow with a
non-retryable application error whose type is the phase and whose details are the whole
RunResult; a run cancelled through Temporal (`harness cancel`, `temporal workflow cancel`, the
UI's button) ends Canceled. A run cancelled by the `cancel` signal alone asks Temporal for that
same cancellation once it has stopped (harness.waits.cancellation), and ends Canceled too when it
arrives; runs recorded before that patch end Completed with a CANCELLED result. Callers read the
RunResult of every ending with `durable_harness._client.run_results`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from harness.engine.run import RunPhase, RunResult
from harness.waits.cancellation import OwnCancellation
from workflows.activity_calls import steps

FAILED_ENDINGS = frozenset(
    {
        RunPhase.FAILED_VALIDATION,
        RunPhase.FAILED_EXECUTION,
        RunPhase.FAILED_VERIFICATION,
        RunPhase.FAILED_PROVIDER,
        RunPhase.BUDGET_EXHAUSTED,
    }
)


def end_as_outcome(result: RunResult) -> None:
    """Raise what ends the workflow as the run ended; return for a Completed ending."""
    if result.status in FAILED_ENDINGS:
        raise ApplicationError(
            f"{result.status.value}: {result.error or 'the run failed'}",
            result.model_dump(mode="json"),
            type=result.status.value,
            non_retryable=True,
        )
    if result.status is RunPhase.CANCELLED and workflow.cancellation_reason() is not None:
        raise asyncio.CancelledError(result.error or "cancelled")


async def cancelled_through_temporal(reason: str, evicted: Callable[[], bool]) -> None:
    """For a run its `cancel` signal stopped: ask Temporal to cancel it, and return once the
    request has arrived (then `end_as_outcome` ends it Canceled). If the server refuses (the
    activity fails), return at once: the run ends Completed with its CANCELLED result, as
    before. The arriving request cancels the workflow's main task once more; that is taken in
    stride here, except an eviction's, which the worker needs to go through."""
    info = workflow.info()
    request = OwnCancellation(workflow_id=info.workflow_id, run_id=info.run_id, reason=reason)
    try:
        answer = await steps.cancel_own_run(request)
        requested = answer.requested
        if not requested:
            workflow.logger.warning("the run could not be cancelled in Temporal: %s", answer.detail)
    except (ActivityError, asyncio.CancelledError) as error:
        if evicted():
            raise
        requested = workflow.cancellation_reason() is not None  # it arrived meanwhile
        if not requested:
            workflow.logger.warning("the run could not be cancelled in Temporal: %s", error)
    while requested and workflow.cancellation_reason() is None:
        try:
            await workflow.wait_condition(lambda: workflow.cancellation_reason() is not None)
        except asyncio.CancelledError:
            if evicted():
                raise
