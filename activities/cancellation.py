"""Activity: ask Temporal to cancel a run that its `cancel` signal stopped (see
harness.waits.cancellation), through the worker's own client."""

from __future__ import annotations

from temporalio import activity
from temporalio.service import RPCError

from harness.engine.contracts import CANCEL_OWN_RUN_ACTIVITY
from harness.waits.cancellation import OwnCancellation, OwnCancellationResult


@activity.defn(name=CANCEL_OWN_RUN_ACTIVITY)
async def cancel_own_run(request: OwnCancellation) -> OwnCancellationResult:
    handle = activity.client().get_workflow_handle(request.workflow_id, run_id=request.run_id)
    try:
        await handle.cancel(reason=request.reason)
    except RPCError as error:  # e.g. it closed meanwhile: the run then ends as it did before
        return OwnCancellationResult(requested=False, detail=error.message)
    return OwnCancellationResult(requested=True)
