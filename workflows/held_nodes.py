"""Nodes that wait: approvals before side effects, async operations, reconciles of uncertain
side effects, and the workflow-native timer and event tools.

A mixin of PlanExecutor, kept apart so the scheduler reads on one screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from temporalio import workflow

from workflows.activity_options import tool_call_summary

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from harness.dag import NodeStatus
    from harness.errors import ErrorCode
    from harness.messages import ToolCallResult
    from harness.run import NodeOutcome, WaitTimeouts
    from harness.tools import NativeWait
    from harness.waits import Decision, WaitKind, WaitStatus

if TYPE_CHECKING:
    from workflows.waiting import WaitDesk


class NodeWaits:
    """Needs from its host: outcomes, a wait desk, wait timeouts, `_fail` and `_complete`."""

    outcomes: dict[str, NodeOutcome]
    _desk: WaitDesk
    _timeouts: WaitTimeouts

    def _fail(
        self,
        node_id: str,
        arguments: dict[str, JsonValue],
        code: ErrorCode,
        message: str,
        attempts: int,
    ) -> None:
        raise NotImplementedError

    def _complete(self, node_id: str, call: ToolCallResult, *, reused: bool) -> None:
        raise NotImplementedError

    async def _approved(self, node_id: str, tool: str, arguments: dict[str, JsonValue]) -> bool:
        """Hold the node until a person or system approves it; anything else fails it."""
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.WAITING
        wait = self._desk.open(
            f"approve-{node_id}",
            WaitKind.APPROVAL,
            f"approve {tool_call_summary(node_id, tool, arguments)}?",
            self._timeouts.approval,
            node_id=node_id,
        )
        await self._desk.until_settled(wait)
        outcome.status = NodeStatus.RUNNING
        if wait.status is WaitStatus.DELIVERED and wait.decision is Decision.APPROVE:
            return True
        if wait.status is WaitStatus.DELIVERED:
            reason = f"rejected by {wait.delivered_by}"
            reason += f": {wait.comment}" if wait.comment else ""
        else:
            reason = f"approval {wait.status.value.lower()} without a decision; treated as rejected"
        self._fail(node_id, arguments, ErrorCode.POLICY_VIOLATION, reason, attempts=0)
        return False

    async def _await_operation(
        self, node_id: str, arguments: dict[str, JsonValue], started: ToolCallResult
    ) -> None:
        """The tool started an external operation; wait for its result to be delivered."""
        begun = started.result if isinstance(started.result, dict) else {}
        operation_id = begun.get("operation_id")
        if not isinstance(operation_id, str):
            message = "an ASYNC_OPERATION tool must return {'operation_id': ...}"
            self._fail(
                node_id, arguments, ErrorCode.TOOL_EXECUTION_FAILED, message, started.attempt
            )
            return
        self.outcomes[node_id].status = NodeStatus.WAITING
        wait = self._desk.open(
            f"op-{node_id}",
            WaitKind.ASYNC_OPERATION,
            f"result of operation {operation_id} started by {node_id}",
            self._timeouts.async_operation,
            node_id=node_id,
            operation_id=operation_id,
        )
        await self._desk.until_settled(wait)
        if wait.status is not WaitStatus.DELIVERED:
            message = f"operation {operation_id} did not report back ({wait.status.value})"
            self._fail(node_id, arguments, ErrorCode.TIMEOUT, message, started.attempt)
            return
        result = {"operation_id": operation_id, "started": started.result, "outcome": wait.payload}
        self._complete(node_id, started.model_copy(update={"result": result}), reused=False)

    async def _reconcile(
        self, node_id: str, tool: str, arguments: dict[str, JsonValue], reason: str
    ) -> None:
        """A side effect whose outcome is uncertain is never retried blindly: it is UNKNOWN
        until someone delivers what really happened."""
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.UNKNOWN
        outcome.error_message = f"outcome unknown: {reason}"
        wait = self._desk.open(
            f"reconcile-{node_id}",
            WaitKind.RECONCILE,
            f"did {tool_call_summary(node_id, tool, arguments)} take effect? deliver "
            '{"outcome": "succeeded", "result": ...} or {"outcome": "failed"}',
            self._timeouts.reconcile,
            node_id=node_id,
        )
        await self._desk.until_settled(wait)
        payload = wait.payload if isinstance(wait.payload, dict) else {}
        if wait.status is WaitStatus.DELIVERED and payload.get("outcome") == "succeeded":
            reconciled = ToolCallResult(result=payload.get("result"), attempt=1, latency_ms=0.0)
            self._complete(node_id, reconciled, reused=False)
            return
        if wait.delivered_by:
            message = f"reconciled as not done by {wait.delivered_by}"
        else:
            message = f"no reconcile delivery ({wait.status.value})"
        self._fail(node_id, arguments, ErrorCode.TOOL_EXECUTION_FAILED, message, attempts=1)

    async def _native_wait(
        self, node_id: str, kind: NativeWait, arguments: dict[str, JsonValue]
    ) -> None:
        """Timers and external events are durable waits in the workflow, not activities."""
        self.outcomes[node_id].status = NodeStatus.WAITING
        if kind is NativeWait.TIMER:
            seconds = float(str(arguments.get("seconds", 0)))
            wait = self._desk.open(
                f"timer-{node_id}", WaitKind.TIMER, f"sleep {seconds:g} s", None, node_id=node_id
            )
            await workflow.sleep(seconds)
            self._desk.settle(wait, "system:timer", {"slept_seconds": seconds})
        else:
            event = str(arguments.get("event"))
            timeout = arguments.get("timeout_seconds")
            wait = self._desk.open(
                f"event-{node_id}",
                WaitKind.EXTERNAL_EVENT,
                f"external event '{event}'",
                float(str(timeout)) if timeout is not None else self._timeouts.external_event,
                node_id=node_id,
                event=event,
            )
            await self._desk.until_settled(wait)
            if wait.status is not WaitStatus.DELIVERED:
                message = f"event '{event}' did not arrive ({wait.status.value})"
                self._fail(node_id, arguments, ErrorCode.TIMEOUT, message, attempts=0)
                return
        result = ToolCallResult(result=wait.payload, attempt=1, latency_ms=0.0)
        self._complete(node_id, result, reused=False)
