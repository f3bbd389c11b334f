"""Held nodes: nodes parked on a durable wait. Approvals before side effects, results of async
operations, reconciles of uncertain side effects, and the workflow-native timer and event tools.

Each settles its node in the ledger when the wait ends. The harness never assumes a side
effect's outcome: when a call's outcome is uncertain or an operation's result is late, a tool
that can be asked (`probes_outcome`) is asked first; only what it cannot settle goes to a person
as a RECONCILE wait.
"""

from __future__ import annotations

from pydantic import JsonValue
from temporalio import workflow

from harness.catalog.tools import NativeWait, ToolCompletion
from harness.core.errors import ErrorCode
from harness.engine.bounds import wait_seconds_problem
from harness.engine.dag import NodeStatus
from harness.engine.messages import OperationProbe, ProbeRequest, ProbeState, ToolCallResult
from harness.engine.node_ledger import NodeLedger
from harness.engine.run import ExecutionOptions
from harness.waits.approval_cover import action_key
from harness.waits.reconcile import reconcile_example
from harness.waits.wait_book import Decision, Wait, WaitKind, WaitStatus
from workflows.activity_calls.tools import probe_operation, tool_call_summary
from workflows.patches import APPROVAL_COVERS_PATCH, LATE_RESULT_RECONCILES_PATCH
from workflows.wait_desk import WaitDesk

MAX_PENDING_ROUNDS = 3
"""How many more waits a late result gets while its system says the operation is under way."""


class HeldNodes:
    def __init__(self, ledger: NodeLedger, desk: WaitDesk, options: ExecutionOptions) -> None:
        self._ledger = ledger
        self._desk = desk
        self._options = options
        self._timeouts = options.wait_timeouts

    async def approved(self, node_id: str, tool: str, arguments: dict[str, JsonValue]) -> bool:
        """Hold the node until a person or system approves it; anything else fails it. The
        same action decided in an earlier attempt of the run is not asked again
        (harness.waits.approval_cover)."""
        key = action_key(tool, arguments)
        cover = self._desk.approvals.cover(key, self._options.attempt)
        if cover is not None and (  # the old patch is asked only where a cover exists
            self._options.approval_covers or workflow.patched(APPROVAL_COVERS_PATCH)
        ):
            self._desk.covered(node_id, tool, cover)
            if cover.decision is Decision.APPROVE:
                return True
            reason = (
                f"rejected by {cover.decided_by} in wait {cover.wait_id} (attempt "
                f"{cover.attempt}); the same action is not asked again"
            )
            self._ledger.fail(node_id, arguments, ErrorCode.POLICY_VIOLATION, reason, attempts=0)
            return False
        self._ledger.hold(node_id, NodeStatus.WAITING)
        wait = self._desk.open(
            f"approve-{node_id}",
            WaitKind.APPROVAL,
            f"approve {tool_call_summary(node_id, tool, arguments)}?",
            self._timeouts.approval,
            node_id=node_id,
        )
        await self._desk.until_settled(wait)
        self._desk.approvals.decided(key, wait, self._options.attempt)
        self._ledger.hold(node_id, NodeStatus.RUNNING)
        if wait.status is WaitStatus.DELIVERED and wait.decision is Decision.APPROVE:
            return True
        if wait.status is WaitStatus.DELIVERED:
            reason = f"rejected by {wait.delivered_by}"
            reason += f": {wait.comment_excerpt()}" if wait.comment else ""
        else:
            reason = f"approval {wait.status.value.lower()} without a decision; treated as rejected"
        self._ledger.fail(node_id, arguments, ErrorCode.POLICY_VIOLATION, reason, attempts=0)
        return False

    async def await_operation(
        self, node_id: str, arguments: dict[str, JsonValue], started: ToolCallResult
    ) -> None:
        """The tool started an external operation; wait for its result to be delivered."""
        begun = started.result if isinstance(started.result, dict) else {}
        operation_id = begun.get("operation_id")
        if not isinstance(operation_id, str):
            message = "an ASYNC_OPERATION tool must return {'operation_id': ...}"
            self._ledger.fail(
                node_id, arguments, ErrorCode.TOOL_EXECUTION_FAILED, message, started.attempt
            )
            return
        self._ledger.hold(node_id, NodeStatus.WAITING)
        wait = self._open_operation(node_id, operation_id)
        if self._options.known_outcomes:
            self._desk.settle_from_earlier(wait)
        await self._desk.until_settled(wait)
        if wait.status is WaitStatus.DELIVERED:
            self._operation_done(node_id, started, operation_id, wait.payload)
            return
        spec = self._ledger.spec(node_id)
        late = f"operation {operation_id} did not report back ({wait.status.value})"
        if wait.status is WaitStatus.EXPIRED and spec.probes_outcome:
            await self._late_result(node_id, arguments, started, operation_id, late)
            return
        if (
            wait.status is WaitStatus.EXPIRED
            and spec.side_effects
            and workflow.patched(LATE_RESULT_RECONCILES_PATCH)
        ):
            await self.reconcile(node_id, spec.name, arguments, late, operation_id)
            return
        self._ledger.fail(node_id, arguments, ErrorCode.TIMEOUT, late, started.attempt)

    def _open_operation(self, node_id: str, operation_id: str) -> Wait:
        return self._desk.open(
            f"op-{node_id}",
            WaitKind.ASYNC_OPERATION,
            f"result of operation {operation_id} started by {node_id}",
            self._timeouts.async_operation,
            node_id=node_id,
            operation_id=operation_id,
        )

    def _operation_done(
        self, node_id: str, started: ToolCallResult, operation_id: str, outcome: JsonValue
    ) -> None:
        result = {"operation_id": operation_id, "started": started.result, "outcome": outcome}
        self._ledger.complete(
            node_id, started.model_copy(update={"result": result, "timing": None})
        )

    async def _late_result(
        self,
        node_id: str,
        arguments: dict[str, JsonValue],
        started: ToolCallResult,
        operation_id: str,
        late: str,
    ) -> None:
        """The result is late: ask the system. While it says the operation is under way, go on
        listening, a wait at a time (each opens before the question, so an outcome reported
        meanwhile is taken, never quarantined); a person is asked only when it cannot tell or
        the operation stays pending for MAX_PENDING_ROUNDS more waits."""
        tool = self._ledger.spec(node_id).name
        for _ in range(MAX_PENDING_ROUNDS):
            again = self._open_operation(node_id, operation_id)
            probe = await self._probe(node_id, arguments, operation_id)
            if again.status is not WaitStatus.PENDING:
                pass  # reported while the system was asked: taken below
            elif probe.state is ProbeState.SETTLED:
                self._desk.cancel_pending("settled by asking the system", node_id=node_id)
                self._settle(node_id, probe, started.attempt)
                return
            elif probe.state is ProbeState.PENDING:
                await self._desk.until_settled(again)
            else:
                self._desk.cancel_pending(
                    f"the system cannot tell: {probe.detail}", node_id=node_id
                )
                await self.reconcile(
                    node_id, tool, arguments, f"{late}; {probe.detail}", operation_id
                )
                return
            if again.status is WaitStatus.DELIVERED:
                self._operation_done(node_id, started, operation_id, again.payload)
                return
        still = f"{late}; still pending after {MAX_PENDING_ROUNDS} more waits"
        await self.reconcile(node_id, tool, arguments, still, operation_id)

    async def after_uncertain_call(
        self, node_id: str, arguments: dict[str, JsonValue], reason: str
    ) -> None:
        """The call of a side effect failed in a way that leaves its outcome open (it timed
        out): ask the system what happened before anyone is asked."""
        spec = self._ledger.spec(node_id)
        probe = await self._probe(node_id, arguments, None)
        if probe.state is ProbeState.SETTLED:
            self._settle(node_id, probe, attempt=1)
        elif (
            probe.state is ProbeState.PENDING and spec.completion is ToolCompletion.ASYNC_OPERATION
        ):
            started = ToolCallResult(result=probe.started, attempt=1, latency_ms=0.0)
            await self.await_operation(node_id, arguments, started)
        elif probe.state is ProbeState.NOT_FOUND:
            message = f"{reason}; {probe.detail}, so nothing was done"
            self._ledger.fail(node_id, arguments, ErrorCode.TOOL_EXECUTION_FAILED, message, 1)
        else:
            await self.reconcile(node_id, spec.name, arguments, f"{reason}; {probe.detail}")

    async def _probe(
        self, node_id: str, arguments: dict[str, JsonValue], operation_id: str | None
    ) -> OperationProbe:
        tool = self._ledger.node(node_id).tool
        probe = await probe_operation(
            ProbeRequest(
                run_id=self._options.run_id,
                scenario=self._options.scenario,
                node_id=node_id,
                tool=tool,
                arguments=arguments,
                operation_id=operation_id,
            ),
            tool_call_summary(node_id, tool, arguments),
        )
        self._ledger.probed(node_id, probe.state.value, probe.detail)
        return probe

    def _settle(self, node_id: str, probe: OperationProbe, attempt: int) -> None:
        """DONE with what the system reported: for an async operation, as its callback would."""
        result: JsonValue = probe.started
        if self._ledger.spec(node_id).completion is ToolCompletion.ASYNC_OPERATION:
            started = probe.started if isinstance(probe.started, dict) else {}
            result = {
                "operation_id": started.get("operation_id"),
                "started": probe.started,
                "outcome": probe.outcome,
            }
        self._ledger.complete(
            node_id, ToolCallResult(result=result, attempt=attempt, latency_ms=0.0)
        )

    async def reconcile(
        self,
        node_id: str,
        tool: str,
        arguments: dict[str, JsonValue],
        reason: str,
        operation_id: str | None = None,
    ) -> None:
        """A side effect whose outcome is uncertain is never retried blindly: it is UNKNOWN
        until someone delivers what really happened."""
        self._ledger.hold(node_id, NodeStatus.UNKNOWN, note=f"outcome unknown: {reason}")
        template = self._ledger.spec(node_id).reconcile_example
        wait = self._desk.open(
            f"reconcile-{node_id}",
            WaitKind.RECONCILE,
            f"did {tool_call_summary(node_id, tool, arguments)} take effect? deliver "
            '{"outcome": "succeeded", "result": ...} or {"outcome": "failed"}',
            self._timeouts.reconcile,
            node_id=node_id,
            example=reconcile_example(template, arguments, operation_id),
        )
        await self._desk.until_settled(wait)
        payload = wait.payload if isinstance(wait.payload, dict) else {}
        if wait.status is WaitStatus.DELIVERED and payload.get("outcome") == "succeeded":
            reconciled = ToolCallResult(result=payload.get("result"), attempt=1, latency_ms=0.0)
            self._ledger.complete(node_id, reconciled)
            return
        if wait.delivered_by:
            message = f"reconciled as not done by {wait.delivered_by}"
        else:
            message = f"no reconcile delivery ({wait.status.value})"
        self._ledger.fail(node_id, arguments, ErrorCode.TOOL_EXECUTION_FAILED, message, attempts=1)

    async def native_wait(
        self, node_id: str, kind: NativeWait, arguments: dict[str, JsonValue]
    ) -> None:
        """Timers and external events are durable waits in the workflow, not activities."""
        self._ledger.hold(node_id, NodeStatus.WAITING)
        name = "seconds" if kind is NativeWait.TIMER else "timeout_seconds"
        value = arguments.get(name)
        problem = None if value is None else wait_seconds_problem(name, value)
        if problem is not None:  # raised in the timer before: a failed workflow task, forever
            self._ledger.fail(node_id, arguments, ErrorCode.INVALID_ARGUMENT, problem, attempts=0)
            return
        if kind is NativeWait.TIMER:
            seconds = float(str(arguments.get("seconds", 0)))
            wait = self._desk.open(
                f"timer-{node_id}", WaitKind.TIMER, f"sleep {seconds:g} s", None, node_id=node_id
            )
            await workflow.sleep(seconds, summary=f"timer of {node_id}: {seconds:g} s")
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
                self._ledger.fail(node_id, arguments, ErrorCode.TIMEOUT, message, attempts=0)
                return
        result = ToolCallResult(result=wait.payload, attempt=1, latency_ms=0.0)
        self._ledger.complete(node_id, result)
