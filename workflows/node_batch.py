"""NodeBatchWorkflow: runs a batch of independent tool calls for a wide plan.

A plan with thousands of ready nodes would push one run's history past Temporal's limits (about
three events per activity). The orchestrator hands such batches to child workflows: each child
holds the events of its own activities, and the parent records one child per batch.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

from harness.contracts import BATCH_WORKFLOW
from harness.messages import (
    BatchCall,
    BatchCallOutcome,
    NodeBatchRequest,
    NodeBatchResult,
    ToolCallRequest,
)
from workflows.activity_calls import TOOL_RETRY, ActivityFailure, llm_queue, run_tool_call


@workflow.defn(name=BATCH_WORKFLOW)
class NodeBatchWorkflow:
    @workflow.run
    async def run(self, request: NodeBatchRequest) -> NodeBatchResult:
        llm_queue()  # decided in the first task, never after a local activity (see llm_queue)
        slots = asyncio.Semaphore(request.max_concurrency)
        outcomes = await asyncio.gather(
            *(self._call(request, call, slots) for call in request.calls)
        )
        return NodeBatchResult(outcomes=list(outcomes))

    async def _call(
        self, request: NodeBatchRequest, call: BatchCall, slots: asyncio.Semaphore
    ) -> BatchCallOutcome:
        async with slots:
            try:
                result = await run_tool_call(
                    ToolCallRequest(
                        run_id=request.run_id,
                        scenario=request.scenario,
                        node_id=call.node_id,
                        tool=call.tool,
                        arguments=call.arguments,
                        provider=request.provider,
                        worker_model=request.worker_model if call.uses_llm else None,
                        fault=call.fault,
                        task=request.task,
                        plan_attempt=request.plan_attempt,
                        mcp=call.mcp,
                    ),
                    local=call.local,
                    retry=TOOL_RETRY,
                    uses_llm=call.uses_llm,
                    summary=call.summary,
                )
            except ActivityError as error:
                failure = ActivityFailure(error, TOOL_RETRY.maximum_attempts or 1)
                return BatchCallOutcome(
                    node_id=call.node_id,
                    error_type=failure.type,
                    error_message=failure.message,
                    attempts=failure.attempts,
                    timing=failure.timing,
                )
        return BatchCallOutcome(node_id=call.node_id, call=result, attempts=result.attempt)
