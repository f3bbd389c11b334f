"""The RunResult of a run, whatever its ending: the one place callers read it (the CLI, the
Python API, the tests, the benchmarks). The run builds its result once, as it ends
(`workflows.run_context.RunContext.end`), and Temporal keeps it where the ending puts it: a
Completed run's is the workflow's result, a Failed run's travels in its workflow failure (see
workflows.outcome), and a run that ended Canceled carries none, so its result is rebuilt from its
history, locally, as `harness trace` does, and is the same one."""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError, CancelledError

from durable_harness.exceptions import RunFailed
from harness.engine.run import RunPhase, RunResult

ENDING_TYPES = frozenset(phase.value for phase in RunPhase if phase.is_terminal)


async def run_result(client: Client, run_id: str) -> RunResult:
    """The run's result once it ends; one line (exit 1) when its workflow failed for another
    cause than the run's own ending (a request no worker could read, say)."""
    try:
        return await result_of(client, client.get_workflow_handle(run_id, result_type=RunResult))
    except WorkflowFailureError as error:
        raise RunFailed(f"run {run_id} failed inside Temporal: {error.cause}") from error


async def result_of(client: Client, handle: WorkflowHandle[Any, Any]) -> RunResult:
    try:
        result: RunResult = await handle.result()
        return RunResult.model_validate(result) if isinstance(result, dict) else result
    except WorkflowFailureError as error:
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.type in ENDING_TYPES and cause.details:
            return RunResult.model_validate(cause.details[0])
        if isinstance(cause, CancelledError):
            from durable_harness._client.history import trace_of

            replayed = await trace_of(client, handle.id)
            return replayed.result
        raise
