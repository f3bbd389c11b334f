"""The RunResult of a run, whatever its ending. A failed run's result travels in its workflow
failure (see workflows.outcome); a run that ended Canceled carries none, so its result is
rebuilt from its history, locally, as `harness trace` does."""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError, CancelledError

from harness.engine.run import RunPhase, RunResult

ENDING_TYPES = frozenset(phase.value for phase in RunPhase if phase.is_terminal)


async def run_result(client: Client, run_id: str) -> RunResult:
    return await result_of(client, client.get_workflow_handle(run_id, result_type=RunResult))


async def result_of(client: Client, handle: WorkflowHandle[Any, Any]) -> RunResult:
    try:
        result: RunResult = await handle.result()
        return RunResult.model_validate(result) if isinstance(result, dict) else result
    except WorkflowFailureError as error:
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.type in ENDING_TYPES and cause.details:
            return RunResult.model_validate(cause.details[0])
        if isinstance(cause, CancelledError):
            from starter.history import trace_of

            replayed = await trace_of(client, handle.id)
            return replayed.result
        raise
