"""Held nodes: nodes parked on a durable wait. Approvals before side effects, results of async
operations, reconciles of uncertain side effects, and the workflow-native timer and event tools.

The one owner of a held node's path: the node runner asks it at three points (`before_call`,
`after_call`, `after_failure`) whether the node is held; a held node is parked on its wait and
settled in the ledger here, or cancelled here when the run stops (`cancel`). The harness never
assumes a side effect's outcome: when a call's outcome is uncertain or an operation's result is
late, a tool that can be asked (`probes_outcome`) is asked first; only what it cannot settle
goes to a person as a RECONCILE wait.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import JsonValue
from temporalio import workflow

from harness.catalog.tools import NativeWait, ToolCompletion
from harness.core.errors import ErrorCode
from harness.engine.bounds import wait_seconds_problem
from harness.engine.dag import NodeStatus
from harness.engine.messages import OperationProbe, ProbeRequest, ProbeState, ToolCallResult
from harness.engine.node_ledger import NodeLedger
from harness.engine.run import ExecutionOptions
from harness.waits.approval_cover import action_key, approval_refusal
from harness.waits.reconcile import reconcile_example
from harness.waits.wait_book import Wait, WaitKind, WaitStatus
from workflows.activity_calls.tools import call_text, probe_operation, tool_call_summary
from workflows.patches import APPROVAL_COVERS_PATCH, LATE_RESULT_RECONCILES_PATCH
from workflows.wait_desk import WaitDesk

MAX_PENDING_ROUNDS = 3
"""How many more waits a late result gets while its system says the operation is under way."""


class HeldNodes:
    def __init__(
        self,
        ledger: NodeLedger,
        desk: WaitDesk,
        options: ExecutionOptions,
        calls_returned: Callable[[], None] = lambda: None,
    ) -> None:
        """`calls_returned`: told when a node's call has ended but the node goes on waiting
        (an operation's result, a reconcile): the attempts it did not use are free again."""
        self._ledger = ledger
        self._desk = desk
        self._options = options
        self._timeouts = options.wait_timeouts
        self._calls_returned = calls_returned

    # -- where the node runner hands a node over -----------------------------------------------

    async def before_call(self, node_id: str, arguments: dict[str, JsonValue]) -> bool:
        """Whether the node's call may go ahead. A native wait (timer, event) is the node's
        whole work: held to its end here (False). A node that needs approval is held until
        decided (False, and failed, unless approved)."""
        spec = self._ledger.spec(node_id)
        if spec.native_wait is not None:
            await self._native_wait(node_id, spec.native_wait, arguments)
            return False
        needs_approval = spec.requires_approval or (
            spec.side_effects and self._options.approve_side_effects
        )
        tool = self._ledger.node(node_id).tool
        return not needs_approval or await self._approved(node_id, tool, arguments)

    async def after_call(
        self, node_id: str, arguments: dict[str, JsonValue], result: ToolCallResult
    ) -> bool:
        """Whether the call's result is the node's own (False: the node is held here for what
        the call started, an async operation's result, and settled when it ends)."""
        if self._ledger.spec(node_id).completion is not ToolCompletion.ASYNC_OPERATION:
            return True
        self._calls_returned()
        await self._await_operation(node_id, arguments, result)
        return False

    async def after_failure(
        self, node_id: str, arguments: dict[str, JsonValue], code: ErrorCode, message: str
    ) -> bool:
        """Whether the call's failure is the node's (False: a side effect's call timed out, so
        its outcome is open; the node is held here until the system or a person settles it)."""
        spec = self._ledger.spec(node_id)
        if not (spec.side_effects and code is ErrorCode.TIMEOUT):
            return True
        self._calls_returned()
        if spec.probes_outcome:
            await self._after_uncertain_call(node_id, arguments, message)
        else:
            await self._reconcile(node_id, arguments, message)
        return False

    def cancel(self, node_id: str, reason: str, *, budget: bool) -> None:
        """The run stops the node: its pending waits close, and it ends CANCELLED."""
        self._desk.cancel_pending(reason, node_id=node_id)
        self._ledger.cancel(node_id, reason, budget=budget)

    # -- the holds ------------------------------------------------------------------------------

    async def _approved(self, node_id: str, tool: str, arguments: dict[str, JsonValue]) -> bool:
        """Hold the node until a person or system approves it; anything else fails it. The
        same action decided in an earlier attempt of the run is not asked again
        (harness.waits.approval_cover)."""
        key = action_key(tool, arguments)
        cover = self._desk.approvals.cover(key, self._options.attempt)
        if cover is not None and (  # the old patch is asked only where a cover exists
            self._options.approval_covers or workflow.patched(APPROVAL_COVERS_PATCH)
        ):
            self._desk.covered(node_id, tool, cover)
            return self._go_ahead(node_id, arguments, cover.refusal())
        prompt = f"approve {call_text(node_id, tool, arguments)}?"
        wait = self._park("approve", node_id, WaitKind.APPROVAL, prompt, self._timeouts.approval)
        await self._desk.until_settled(wait)
        self._desk.approvals.decided(key, wait, self._options.attempt)
        self._ledger.hold(node_id, NodeStatus.RUNNING)
        return self._go_ahead(node_id, arguments, approval_refusal(wait))

    def _go_ahead(self, node_id: str, arguments: dict[str, JsonValue], refusal: str | None) -> bool:
        """Whether the approval lets the node's call go ahead; a refusal fails the node."""
        if refusal is not None:
            self._ledger.fail(node_id, arguments, ErrorCode.POLICY_VIOLATION, refusal, attempts=0)
        return refusal is None

    async def _await_operation(
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
            await self._reconcile(node_id, arguments, late, operation_id)
            return
        self._ledger.fail(node_id, arguments, ErrorCode.TIMEOUT, late, started.attempt)

    def _open_operation(self, node_id: str, operation_id: str) -> Wait:
        prompt = f"result of operation {operation_id} started by {node_id}"
        timeout = self._timeouts.async_operation
        return self._park("op", node_id, WaitKind.ASYNC_OPERATION, prompt, timeout, operation_id)

    def _operation_done(
        self, node_id: str, started: ToolCallResult, operation_id: str, outcome: JsonValue
    ) -> None:
        result = {"operation_id": operation_id, "started": started.result, "outcome": outcome}
        done = started.model_copy(update={"result": result, "timing": None})
        self._ledger.complete(node_id, done)

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
                reason = f"{late}; {probe.detail}"
                await self._reconcile(node_id, arguments, reason, operation_id)
                return
            if again.status is WaitStatus.DELIVERED:
                self._operation_done(node_id, started, operation_id, again.payload)
                return
        still = f"{late}; still pending after {MAX_PENDING_ROUNDS} more waits"
        await self._reconcile(node_id, arguments, still, operation_id)

    async def _after_uncertain_call(
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
            await self._await_operation(node_id, arguments, started)
        elif probe.state is ProbeState.NOT_FOUND:
            message = f"{reason}; {probe.detail}, so nothing was done"
            self._ledger.fail(node_id, arguments, ErrorCode.TOOL_EXECUTION_FAILED, message, 1)
        else:
            await self._reconcile(node_id, arguments, f"{reason}; {probe.detail}")

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
        done = ToolCallResult(result=result, attempt=attempt, latency_ms=0.0)
        self._ledger.complete(node_id, done)

    async def _reconcile(
        self,
        node_id: str,
        arguments: dict[str, JsonValue],
        reason: str,
        operation_id: str | None = None,
    ) -> None:
        """A side effect whose outcome is uncertain is never retried blindly: it is UNKNOWN
        until someone delivers what really happened."""
        spec = self._ledger.spec(node_id)
        wait = self._park(
            "reconcile",
            node_id,
            WaitKind.RECONCILE,
            f"did {call_text(node_id, spec.name, arguments)} take effect? deliver "
            '{"outcome": "succeeded", "result": ...} or {"outcome": "failed"}',
            self._timeouts.reconcile,
            example=reconcile_example(spec.reconcile_example, arguments, operation_id),
            unknown=f"outcome unknown: {reason}",
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

    async def _native_wait(
        self, node_id: str, kind: NativeWait, arguments: dict[str, JsonValue]
    ) -> None:
        """Timers and external events are durable waits in the workflow, not activities."""
        name = "seconds" if kind is NativeWait.TIMER else "timeout_seconds"
        value = arguments.get(name)
        problem = None if value is None else wait_seconds_problem(name, value)
        if problem is not None:  # raised in the timer before: a failed workflow task, forever
            self._ledger.fail(node_id, arguments, ErrorCode.INVALID_ARGUMENT, problem, attempts=0)
            return
        if kind is NativeWait.TIMER:
            seconds = float(str(arguments.get("seconds", 0)))
            wait = self._park("timer", node_id, WaitKind.TIMER, f"sleep {seconds:g} s", None)
            await workflow.sleep(seconds, summary=f"timer of {node_id}: {seconds:g} s")
            self._desk.settle(wait, "system:timer", {"slept_seconds": seconds})
        else:
            event = str(arguments.get("event"))
            timeout = arguments.get("timeout_seconds")
            wait = self._park(
                "event",
                node_id,
                WaitKind.EXTERNAL_EVENT,
                f"external event '{event}'",
                float(str(timeout)) if timeout is not None else self._timeouts.external_event,
                event=event,
            )
            await self._desk.until_settled(wait)
            if wait.status is not WaitStatus.DELIVERED:
                message = f"event '{event}' did not arrive ({wait.status.value})"
                self._ledger.fail(node_id, arguments, ErrorCode.TIMEOUT, message, attempts=0)
                return
        result = ToolCallResult(result=wait.payload, attempt=1, latency_ms=0.0)
        self._ledger.complete(node_id, result)

    def _park(
        self,
        name: str,
        node_id: str,
        kind: WaitKind,
        prompt: str,
        timeout: float | None,
        operation_id: str | None = None,
        *,
        event: str | None = None,
        example: JsonValue = None,
        unknown: str | None = None,
    ) -> Wait:
        """Hold the node on its wait `NAME-NODE`: WAITING, or UNKNOWN (saying why) for a
        reconcile. The one place a node is parked; `_approved` takes it back for its call."""
        status = NodeStatus.WAITING if unknown is None else NodeStatus.UNKNOWN
        self._ledger.hold(node_id, status, note=unknown)
        return self._desk.open(
            f"{name}-{node_id}",
            kind,
            prompt,
            timeout,
            node_id=node_id,
            operation_id=operation_id,
            event=event,
            example=example,
        )
