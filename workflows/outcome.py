"""How a run's ending shows in Temporal: the workflow's own status tells the run's outcome.

A run that fails (any FAILED_* phase, or BUDGET_EXHAUSTED) fails the workflow with a
non-retryable application error whose type is the phase and whose details are the whole
RunResult; a run cancelled through Temporal (`harness cancel`, `temporal workflow cancel`, the
UI's button) ends Canceled. A run cancelled by the `cancel` signal alone ends Completed with a
CANCELLED result: a workflow cannot cancel itself in Temporal's sense. Callers read the
RunResult of every ending with `starter.run_results`.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from harness.run import RunPhase, RunResult

OUTCOME_STATUS_PATCH = "workflow-status-is-the-outcome"
FAILED_ENDINGS = frozenset(
    {
        RunPhase.FAILED_VALIDATION,
        RunPhase.FAILED_EXECUTION,
        RunPhase.FAILED_VERIFICATION,
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
