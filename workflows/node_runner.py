"""The node runner: carries one admitted node to its end, or a batch of them to a child workflow.

For one node: a native wait, or an approval when the tool needs one, then the tool's activity,
the decoding of its failure, and what its completion asks for (an async operation's result, a
reconcile of an uncertain side effect). Every outcome is settled in the ledger.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import JsonValue
from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ActivityError, CancelledError
from temporalio.workflow import ChildWorkflowHandle

from harness.catalog.tools import CallPolicy, ToolCompletion
from harness.core.errors import ErrorCode, parse_error_code
from harness.engine.budget import CONSERVE_AT
from harness.engine.contracts import BATCH_WORKFLOW
from harness.engine.faults import FaultSpec
from harness.engine.messages import (
    BatchCall,
    NodeBatchRequest,
    NodeBatchResult,
    ToolCallGroup,
    ToolCallRequest,
)
from harness.engine.node_ledger import NodeLedger
from harness.engine.run import ExecutionOptions
from workflows.activity_calls.failures import ActivityFailure
from workflows.activity_calls.tools import (
    policy_retry,
    retry_after,
    run_tool_call,
    run_tool_group,
    to_retry_alone,
    tool_call_summary,
    tool_retry,
)
from workflows.held_nodes import HeldNodes
from workflows.patches import BATCH_ID_PATCH


class NodeRunner:
    def __init__(
        self,
        ledger: NodeLedger,
        held: HeldNodes,
        options: ExecutionOptions,
        stopping: Callable[[], bool],
        calls_returned: Callable[[], None] = lambda: None,
    ) -> None:
        """`calls_returned`: told when a node's call has ended but the node goes on waiting
        (an operation's result, a reconcile): the attempts it did not use are free again."""
        self._ledger = ledger
        self._held = held
        self._options = options
        self._stopping = stopping
        self._calls_returned = calls_returned

    async def run(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        node = self._ledger.node(node_id)
        spec = self._ledger.spec(node_id)
        if spec.native_wait is not None:
            await self._held.native_wait(node_id, spec.native_wait, arguments)
            return
        needs_approval = spec.requires_approval or (
            spec.side_effects and self._options.approve_side_effects
        )
        if needs_approval and not await self._held.approved(node_id, node.tool, arguments):
            return
        self._ledger.call_started(node_id)
        await self.call(node_id, arguments)

    async def call(
        self, node_id: str, arguments: dict[str, JsonValue], earlier_attempts: int = 0
    ) -> None:
        """The node's tool call, as its own activity; `earlier_attempts` it already had in a
        group of cheap calls count towards its retries. A call that reserved its attempts makes
        no more than those, with its tool's timeout and backoff."""
        node, spec = self._ledger.node(node_id), self._ledger.spec(node_id)
        policy = self._policy(node_id)
        retry = tool_retry(spec) if policy is None else policy_retry(policy)
        try:
            result = await run_tool_call(
                self.tool_request(node_id, arguments, earlier_attempts),
                local=spec.local,
                retry=retry_after(retry, earlier_attempts),
                uses_llm=spec.uses_llm,
                summary=tool_call_summary(node_id, node.tool, arguments),
                policy=policy,
            )
        except ActivityError as error:
            await self._failed(node_id, arguments, error)
            return
        self._ledger.retried(
            node_id, result.attempt, result.timing.retries if result.timing else None
        )
        if spec.completion is ToolCompletion.ASYNC_OPERATION:
            self._calls_returned()
            await self._held.await_operation(node_id, arguments, result)
            return
        self._ledger.complete(node_id, result, arguments=None if spec.side_effects else arguments)

    def tool_request(
        self, node_id: str, arguments: dict[str, JsonValue], earlier_attempts: int = 0
    ) -> ToolCallRequest:
        node, spec = self._ledger.node(node_id), self._ledger.spec(node_id)
        return ToolCallRequest(
            run_id=self._options.run_id,
            scenario=self._options.scenario,
            node_id=node_id,
            tool=node.tool,
            arguments=arguments,
            provider=self._options.provider,
            fault=self._fault(node.tool, arguments),
            task=self._options.task,
            plan_attempt=self._options.attempt if self._options.task else None,
            economy=spec.uses_llm and self._economy(),
            worker_model=self._options.worker_model if spec.uses_llm else None,
            mcp=spec.mcp,
            earlier_attempts=earlier_attempts,
        )

    async def run_group(self, calls: dict[str, dict[str, JsonValue]]) -> None:
        """Several ready cheap calls (node id -> arguments, each already started in the ledger)
        in one local activity. Each outcome is settled on its own: a result completes its node,
        a failure that may be retried is retried as the node's own activity, counting the
        attempt it had here, and any other failure fails the node."""
        group = ToolCallGroup(calls=[self.tool_request(n, args) for n, args in calls.items()])
        try:
            result = await run_tool_group(group)
        except ActivityError as error:
            if self._stopping() and isinstance(error.cause, CancelledError):
                raise asyncio.CancelledError from error
            again = [self._after_group(n, args, error) for n, args in calls.items()]
            await asyncio.gather(*again)
            return
        retries = []
        for outcome in result.outcomes:
            node_id, arguments = outcome.node_id, calls[outcome.node_id]
            timing = outcome.call.timing if outcome.call is not None else outcome.timing
            if outcome.call is not None:
                self._ledger.retried(node_id, outcome.attempts, timing.retries if timing else None)
                self._ledger.complete(node_id, outcome.call, arguments=arguments)
                continue
            attempts = outcome.attempts
            if to_retry_alone(outcome, self._ledger.reserved_attempts(node_id)):
                retries.append(self.call(node_id, arguments, attempts))
                continue
            self._ledger.retried(node_id, attempts, timing.retries if timing else None)
            code, message = parse_error_code(outcome.error_type), outcome.error_message or "failed"
            self._ledger.fail(node_id, arguments, code, message, attempts, timing)
        await asyncio.gather(*retries)

    async def _after_group(
        self, node_id: str, arguments: dict[str, JsonValue], error: ActivityError
    ) -> None:
        """A call whose group failed as a whole, which counts as its first attempt: made again
        as its own activity, unless that was the only attempt it reserved."""
        reserved = self._ledger.reserved_attempts(node_id)
        if reserved is None or reserved > 1:
            await self.call(node_id, arguments, 1)
            return
        failure = ActivityFailure(error, 1)
        self._ledger.fail(node_id, arguments, failure.code, failure.message, 1, failure.timing)

    def _policy(self, node_id: str) -> CallPolicy | None:
        """The call's policy, when it reserved its attempts (none: runs before 0.10)."""
        reserved = self._ledger.reserved_attempts(node_id)
        return None if reserved is None else self._ledger.spec(node_id).call_policy(reserved)

    def _economy(self) -> bool:
        return self._options.economy_under_pressure and self._ledger.pressure() >= CONSERVE_AT

    async def _failed(
        self, node_id: str, arguments: dict[str, JsonValue], error: ActivityError
    ) -> None:
        if self._stopping() and isinstance(error.cause, CancelledError):
            raise asyncio.CancelledError from error  # the run stopped it: not the node's failure
        spec = self._ledger.spec(node_id)
        # A failure that does not say how many attempts ran (a timeout on the last one) ran
        # all the policy allowed: the attempts reserved, or TOOL_RETRY's before 0.10.
        most = self._ledger.reserved_attempts(node_id) or tool_retry(spec).maximum_attempts or 1
        failure = ActivityFailure(error, most)
        self._ledger.retried(node_id, failure.attempts, failure.retries)
        if spec.side_effects and failure.code is ErrorCode.TIMEOUT:
            self._calls_returned()
            if spec.probes_outcome:
                await self._held.after_uncertain_call(node_id, arguments, failure.message)
            else:
                await self._held.reconcile(node_id, spec.name, arguments, failure.message)
            return
        self._ledger.fail(
            node_id, arguments, failure.code, failure.message, failure.attempts, failure.timing
        )

    def _fault(self, tool: str, arguments: dict[str, JsonValue]) -> FaultSpec | None:
        """The injected fault this call carries, if the run has one for it."""
        return next((f for f in self._options.faults if f.matches(tool, arguments)), None)

    def batch_call(self, node_id: str, arguments: dict[str, JsonValue]) -> BatchCall:
        tool = self._ledger.node(node_id).tool
        return BatchCall(
            node_id=node_id,
            tool=tool,
            arguments=arguments,
            summary=tool_call_summary(node_id, tool, arguments),
            fault=self._fault(tool, arguments),
            local=self._ledger.spec(node_id).local,
            uses_llm=self._ledger.spec(node_id).uses_llm,
            mcp=self._ledger.spec(node_id).mcp,
            policy=self._policy(node_id),
        )

    async def run_batch(self, calls: list[BatchCall], number: int, slots: int) -> NodeBatchResult:
        """Hand `calls` to one child workflow that keeps `slots` of them in flight; its outcomes
        are the caller's to settle."""
        handle = await self._start_batch(calls, number, slots, NodeBatchResult)
        result: NodeBatchResult = await handle  # as execute_child_workflow: start, then wait
        return result

    async def run_batch_in_turn(
        self, calls: list[BatchCall], number: int, slots: int, started: Callable[[], None]
    ) -> RawValue:
        """As run_batch, but `started` is called once the server has started the child (a later
        workflow task than the one that asked for it), and the result comes undecoded: the
        caller decodes it (`batch_result`) when its turn comes."""
        handle = await self._start_batch(calls, number, slots, RawValue)
        started()
        raw: RawValue = await handle
        return raw

    @staticmethod
    def batch_result(raw: RawValue) -> NodeBatchResult:
        result: NodeBatchResult = workflow.payload_converter().from_payload(
            raw.payload, NodeBatchResult
        )
        return result

    async def _start_batch(
        self, calls: list[BatchCall], number: int, slots: int, result_type: type[Any]
    ) -> ChildWorkflowHandle[Any, Any]:
        options = self._options
        batch_id = f"{options.run_id}-batch-{number}"
        if workflow.patched(BATCH_ID_PATCH):
            batch_id = f"{options.run_id}-attempt-{options.attempt}-batch-{number}"
        return await workflow.start_child_workflow(
            BATCH_WORKFLOW,
            NodeBatchRequest(
                run_id=options.run_id,
                scenario=options.scenario,
                provider=options.provider,
                worker_model=options.worker_model,
                max_concurrency=slots,
                calls=calls,
                task=options.task,
                plan_attempt=options.attempt if options.task else None,
                cheap_group_size=options.scale.cheap_group_size if options.group_cheap_calls else 0,
            ),
            id=batch_id,
            result_type=result_type,
            static_summary=f"batch {number}: {len(calls)} nodes",
        )
