"""The node runner: carries one admitted node to its end, or a group of cheap calls to theirs.

For one node: the tool's activity, the decoding of its failure, and its result. A node that is
held on the way (a native wait or an approval before its call, an async operation's result or
the reconcile of an uncertain side effect after it) is handed to `workflows.held_nodes`, which
settles it. Every other outcome is settled in the ledger here. A wide plan's batches describe
their calls here (`batch_call`) and go to child workflows from `workflows.batches`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import JsonValue
from temporalio.exceptions import ActivityError, CancelledError

from harness.catalog.tools import CallPolicy
from harness.core.errors import parse_error_code
from harness.engine.agent_node import AGENT_TOOL
from harness.engine.budget import CONSERVE_AT
from harness.engine.faults import FaultSpec
from harness.engine.messages import BatchCall, ToolCallGroup, ToolCallRequest
from harness.engine.node_ledger import NodeLedger
from harness.engine.run import ExecutionOptions
from workflows.activity_calls.failures import ActivityFailure, charged_usage
from workflows.activity_calls.tools import (
    policy_retry,
    retry_after,
    run_tool_call,
    run_tool_group,
    to_retry_alone,
    tool_call_summary,
    tool_retry,
)
from workflows.agent_nodes import AgentNodes
from workflows.held_nodes import HeldNodes


class NodeRunner:
    def __init__(
        self,
        ledger: NodeLedger,
        held: HeldNodes,
        options: ExecutionOptions,
        stopping: Callable[[], bool],
        agents: AgentNodes,
    ) -> None:
        self._agents = agents
        self._ledger = ledger
        self._held = held
        self._options = options
        self._stopping = stopping

    async def run(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        if self._ledger.node(node_id).tool == AGENT_TOOL:
            self._ledger.call_started(node_id)
            await self._agents.run(node_id, arguments)  # its loop, as a child workflow
            return
        if not await self._held.before_call(node_id, arguments):
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
        if not await self._held.after_call(node_id, arguments, result):
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
            cost_limited=spec.uses_llm and self._options.cost_limited,
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
        if not await self._held.after_failure(node_id, arguments, failure.code, failure.message):
            return
        self._ledger.fail(
            node_id, arguments, failure.code, failure.message, failure.attempts, failure.timing
        )
        if (usage := charged_usage(failure)) is not None:
            self._ledger.charge_failed(node_id, usage)

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
