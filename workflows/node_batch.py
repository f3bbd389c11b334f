"""NodeBatchWorkflow: runs a batch of independent tool calls for a wide plan.

A plan with thousands of ready nodes would push one run's history past Temporal's limits (about
three events per activity). The orchestrator hands such batches to child workflows: each child
holds the events of its own activities, and the parent records one child per batch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import workflow
from temporalio.exceptions import ActivityError

from harness.engine.contracts import BATCH_WORKFLOW
from harness.engine.messages import (
    BatchCall,
    BatchCallOutcome,
    NodeBatchRequest,
    NodeBatchResult,
    ToolCallGroup,
    ToolCallRequest,
)
from workflows.activity_calls.failures import ActivityFailure
from workflows.activity_calls.placement import llm_queue, local_failures_are_activity_errors
from workflows.activity_calls.tools import (
    TOOL_RETRY,
    policy_retry,
    retry_after,
    run_tool_call,
    run_tool_group,
    to_retry_alone,
)


@workflow.defn(name=BATCH_WORKFLOW)
class NodeBatchWorkflow:
    @workflow.run
    async def run(self, request: NodeBatchRequest) -> NodeBatchResult:
        llm_queue()  # decided in the first task, never after a local activity (see llm_queue)
        local_failures_are_activity_errors()  # likewise: its local tool calls read it
        self._request = request
        self._slots = _Slots(request.max_concurrency)
        size = min(request.cheap_group_size, request.max_concurrency)
        cheap = [call for call in request.calls if size > 1 and _cheap(call)]
        grouped = {call.node_id for call in cheap}
        groups = [cheap[start : start + size] for start in range(0, len(cheap), max(size, 1))]
        work = [self._group(group) for group in groups if len(group) > 1]
        work += [self._one(group[0]) for group in groups if len(group) == 1]
        work += [self._one(call) for call in request.calls if call.node_id not in grouped]
        settled: dict[str, BatchCallOutcome] = {}
        for outcomes in await asyncio.gather(*work):
            settled.update((outcome.node_id, outcome) for outcome in outcomes)
        return NodeBatchResult(outcomes=[settled[call.node_id] for call in request.calls])

    async def _one(self, call: BatchCall) -> list[BatchCallOutcome]:
        async with self._slots.taken(1):
            return [await self._call(call)]

    async def _group(self, calls: list[BatchCall]) -> list[BatchCallOutcome]:
        """Several cheap calls in one local activity; a call that failed and may be retried is
        retried as its own activity, counting the attempt it had in the group."""
        async with self._slots.taken(len(calls)):
            group = ToolCallGroup(calls=[self._tool_request(call) for call in calls])
            try:
                result = await run_tool_group(group)
            except ActivityError as error:
                return list(await asyncio.gather(*(self._again(call, error) for call in calls)))
            by_id = {call.node_id: call for call in calls}
            outcomes: list[BatchCallOutcome] = []
            retried = []
            for outcome in result.outcomes:
                call = by_id[outcome.node_id]
                if to_retry_alone(outcome, call.policy.max_attempts if call.policy else None):
                    retried.append(self._call(call, outcome.attempts))
                else:
                    outcomes.append(outcome)
            return outcomes + list(await asyncio.gather(*retried))

    def _tool_request(self, call: BatchCall, earlier_attempts: int = 0) -> ToolCallRequest:
        request = self._request
        return ToolCallRequest(
            run_id=request.run_id,
            scenario=request.scenario,
            node_id=call.node_id,
            tool=call.tool,
            arguments=call.arguments,
            provider=request.provider,
            worker_model=request.worker_model if call.uses_llm else None,
            cost_limited=call.uses_llm and request.cost_limited,
            fault=call.fault,
            task=request.task,
            plan_attempt=request.plan_attempt,
            mcp=call.mcp,
            earlier_attempts=earlier_attempts,
        )

    async def _again(self, call: BatchCall, error: ActivityError) -> BatchCallOutcome:
        """A call whose group failed as a whole, which counts as its first attempt: made again
        as its own activity, unless that was the only attempt it reserved."""
        if call.policy is not None and call.policy.max_attempts <= 1:
            return _failed(call, ActivityFailure(error, 1))
        return await self._call(call, 1)

    async def _call(self, call: BatchCall, earlier_attempts: int = 0) -> BatchCallOutcome:
        """The call as its own activity, with the attempts it reserved in the run's budget
        (none reserved: TOOL_RETRY's, as batches of runs before 0.10)."""
        retry = TOOL_RETRY if call.policy is None else policy_retry(call.policy)
        try:
            result = await run_tool_call(
                self._tool_request(call, earlier_attempts),
                local=call.local,
                retry=retry_after(retry, earlier_attempts),
                uses_llm=call.uses_llm,
                summary=call.summary,
                policy=call.policy,
            )
        except ActivityError as error:
            most = call.policy.max_attempts if call.policy else TOOL_RETRY.maximum_attempts
            return _failed(call, ActivityFailure(error, most or 1))
        return BatchCallOutcome(node_id=call.node_id, call=result, attempts=result.attempt)


def _failed(call: BatchCall, failure: ActivityFailure) -> BatchCallOutcome:
    return BatchCallOutcome(
        node_id=call.node_id,
        error_type=failure.type,
        error_message=failure.message,
        attempts=failure.attempts,
        timing=failure.timing,
    )


def _cheap(call: BatchCall) -> bool:
    return call.local and not call.uses_llm and call.mcp is None


class _Slots:
    """The batch's concurrency cap, taken one slot per call; a group takes its slots together
    (one group at a time, so two groups never each hold half of what both need)."""

    def __init__(self, count: int) -> None:
        self._free = asyncio.Semaphore(count)
        self._gathering = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def taken(self, count: int) -> AsyncIterator[None]:
        if count == 1:
            await self._free.acquire()  # as batches before groups took theirs
        else:
            async with self._gathering:
                for _ in range(count):
                    await self._free.acquire()
        try:
            yield
        finally:
            for _ in range(count):
                self._free.release()
