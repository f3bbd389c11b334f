"""A tiny workflow that drives an agent runtime's slices as a session does: open, run_slice,
and on WAITING the wait's answer through apply_wait_result, until DONE or its slices are run."""

from __future__ import annotations

from pydantic import BaseModel, JsonValue
from temporalio import workflow
from temporalio.exceptions import ApplicationError

from harness.catalog.tools import ToolSpec
from harness.engine.sessions import (
    SessionStatus,
    SliceLimits,
    SliceRequest,
    SliceResult,
    WaitResult,
)
from workflows.runtimes import runtime_missing, runtime_named

SLICES_WORKFLOW = "TestRuntimeSlices"


class SlicePlan(BaseModel):
    runtime: str
    message: str
    tools: list[ToolSpec]
    max_turns: int
    slices: int
    answer: JsonValue = None
    """What the person answers a wait with."""


@workflow.defn(name=SLICES_WORKFLOW)
class RuntimeSlicesWorkflow:
    @workflow.run
    async def run(self, plan: SlicePlan) -> list[SliceResult]:
        runtime = runtime_named(plan.runtime)
        if runtime is None:
            raise ApplicationError(runtime_missing(plan.runtime), non_retryable=True)
        checkpoint = runtime.open(None, plan.message)
        results: list[SliceResult] = []
        for epoch in range(1, plan.slices + 1):
            request = SliceRequest(
                session_id="chat",
                workflow_id=workflow.info().workflow_id,
                scenario="synthetic",
                epoch=epoch,
                tools=plan.tools,
                limits=SliceLimits(max_turns=plan.max_turns),
            )
            result = await runtime.run_slice(checkpoint, request)
            results.append(result)
            checkpoint = result.checkpoint
            if result.status is SessionStatus.DONE:
                break
            if result.wait is not None:
                answer = WaitResult(
                    call_id=result.wait.call_id, tool=result.wait.tool, ok=True, result=plan.answer
                )
                checkpoint = runtime.apply_wait_result(checkpoint, answer)
        return results
