"""The event-driven DAG scheduler: a node starts the moment its own dependencies are DONE.

Each node is one activity. Completions that arrive in the same workflow task are handled in one
activation, and the nodes they unblock are scheduled in that same task, so there is no
level-by-level barrier and no extra round trip per completion.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, CancelledError, ChildWorkflowError

from workflows.activity_options import (
    SIDE_EFFECT_RETRY,
    TOOL_RETRY,
    ActivityFailure,
    run_tool_call,
    tool_call_summary,
)
from workflows.node_batch import NodeBatchWorkflow
from workflows.node_waits import NodeWaits
from workflows.recorder import TraceRecorder
from workflows.waiting import WaitDesk

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from harness.binding import BindingError, resolve_arguments
    from harness.budget import Budget, Degradation, degradation
    from harness.dag import DagState, NodeStatus
    from harness.errors import ErrorClass, ErrorCode, FailureContext, classify, parse_error_code
    from harness.faults import FaultSpec
    from harness.messages import BatchCall, NodeBatchRequest, ToolCallRequest, ToolCallResult
    from harness.plan import Plan
    from harness.reuse import call_key
    from harness.run import NodeOutcome, ScaleOptions, WaitTimeouts
    from harness.tools import ToolCatalog, ToolCompletion
    from harness.trace import TraceKind
    from harness.usage import TokenUsage

BUDGET_EXHAUSTED_REASON = "budget exhausted"
OUT_OF_TIME_REASON = "budget exhausted: wall-clock limit reached"


class PlanExecutor(NodeWaits):
    """Runs one validated plan to the end: every node DONE, FAILED or SKIPPED."""

    def __init__(
        self,
        *,
        run_id: str,
        scenario: str,
        plan: Plan,
        catalog: ToolCatalog,
        max_concurrency: int,
        budget: Budget,
        recorder: TraceRecorder,
        reusable: Mapping[str, ToolCallResult],
        faults: list[FaultSpec],
        provider: str | None,
        desk: WaitDesk,
        approve_side_effects: bool,
        timeouts: WaitTimeouts,
        scale: ScaleOptions,
    ) -> None:
        self._run_id = run_id
        self._scenario = scenario
        self._plan = plan
        self._catalog = catalog
        self._max_concurrency = max_concurrency
        self._budget = budget
        self._recorder = recorder
        self._reusable = reusable
        self._faults = faults
        self._provider = provider
        self._desk = desk
        self._approve_side_effects = approve_side_effects
        self._timeouts = timeouts
        self.dag = DagState(plan)
        self._nodes = {node.id: node for node in plan.nodes}
        self._specs = {spec.name: spec for spec in catalog.tools}
        self._scale = scale
        self._batching = len(plan.nodes) > scale.batch_plan_nodes
        self._batches = 0
        self.outcomes = {
            node.id: NodeOutcome(id=node.id, tool=node.tool, role=self._role(node.tool))
            for node in plan.nodes
        }
        self.results: dict[str, JsonValue] = {}
        self.reusable_next: dict[str, ToolCallResult] = {}
        self.failures: list[FailureContext] = []
        self.usage = TokenUsage()
        self.budget_skips = 0
        self.halted_by: str | None = None
        self._in_flight = 0
        self._crash: BaseException | None = None
        self._stop_reason: str | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}

    async def run(self, seconds_left: float | None) -> None:
        """Run until every node has finished, or the wall-clock budget runs out."""
        self._launch_ready()
        timeout = None if seconds_left is None else timedelta(seconds=max(seconds_left, 0.001))
        try:
            await workflow.wait_condition(
                lambda: self.dag.is_finished() or self._crash is not None, timeout=timeout
            )
        except TimeoutError:
            await self._stop_for_time()
        if self._crash is not None:
            raise self._crash

    async def _stop_for_time(self) -> None:
        self._budget.set_elapsed(self._recorder.elapsed_seconds())
        await self.stop(OUT_OF_TIME_REASON)

    async def stop(self, reason: str) -> None:
        """Admit nothing more, cancel what runs (activities see it through heartbeats), and
        wait until every node has settled. Finished results are kept."""
        self._stop_reason = reason
        self._skip_ready(reason, budget=reason == OUT_OF_TIME_REASON)
        for node_id in self.dag.running():
            task = self._tasks.get(node_id)
            if task is not None:
                task.cancel()
        await workflow.wait_condition(lambda: self.dag.is_finished() or self._crash is not None)

    def _role(self, tool: str) -> str:
        spec = self._catalog.get(tool)
        return spec.role.value if spec else "UNKNOWN"

    def _launch_ready(self) -> None:
        while self._in_flight < self._max_concurrency and self.dag.has_ready():
            self._budget.set_elapsed(self._recorder.elapsed_seconds())
            if self._stop_reason is not None:
                return
            if self.halted_by is not None:
                self._skip_ready(f"run halted: {self.halted_by}", budget=False)
                return
            if self._exhausted():
                self._skip_ready(BUDGET_EXHAUSTED_REASON, budget=True)
                return
            if (
                self._batching
                and self._in_flight == 0
                and self.dag.ready_count() >= (self._scale.batch_min_ready)
            ):
                self._launch_batch()
                continue
            (node_id,) = self.dag.pop_ready(1)
            arguments = self._prepare(node_id)
            if arguments is not None:
                self._in_flight += 1
                task = asyncio.create_task(self._run_node(node_id, arguments), name=node_id)
                task.add_done_callback(self._settle_unstarted([node_id], 1))
                self._tasks[node_id] = task

    def _prepare(self, node_id: str) -> dict[str, JsonValue] | None:
        """Resolve the node's arguments and charge its call; None when it is already settled
        (a binding error fails it, an identical earlier result is reused)."""
        node = self._nodes[node_id]
        spec = self._specs[node.tool]
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.RUNNING
        outcome.started_at = workflow.now()
        try:
            arguments = resolve_arguments(node, spec, self.results)
        except BindingError as error:
            self._fail(node_id, {}, ErrorCode.INVALID_ARGUMENT, str(error), attempts=0)
            return None
        key = call_key(node.tool, arguments)
        if key in self._reusable and not spec.side_effects:
            self._complete(node_id, self._reusable[key], reused=True)
            return None
        self._budget.charge_tool_call()
        return arguments

    def _batchable(self, node_id: str) -> bool:
        spec = self._specs[self._nodes[node_id].tool]
        return (
            spec.native_wait is None
            and not spec.side_effects
            and not spec.requires_approval
            and spec.completion is ToolCompletion.SYNC
        )

    def _launch_batch(self) -> None:
        """Hand many ready, independent plain nodes to one child workflow. While the batch
        runs it holds every concurrency slot; the child keeps to the same cap."""
        calls: list[BatchCall] = []
        for node_id in self.dag.ready():
            if len(calls) >= self._scale.batch_size:
                break
            if not self._batchable(node_id) or self._exhausted():
                continue
            self.dag.take(node_id)
            arguments = self._prepare(node_id)
            if arguments is None:
                continue
            tool = self._nodes[node_id].tool
            self._recorder.emit(
                TraceKind.NODE_START, role=self.outcomes[node_id].role, node_id=node_id, tool=tool
            )
            calls.append(
                BatchCall(
                    node_id=node_id,
                    tool=tool,
                    arguments=arguments,
                    summary=tool_call_summary(node_id, tool, arguments),
                    fault=next((f for f in self._faults if f.matches(tool, arguments)), None),
                    local=self._specs[tool].local,
                )
            )
        if not calls:
            self._batching = False  # nothing batchable is ready; fall back to single nodes
            return
        self._in_flight += self._max_concurrency
        self._batches += 1
        task = asyncio.create_task(self._run_batch(calls, self._batches))
        node_ids = [call.node_id for call in calls]
        task.add_done_callback(self._settle_unstarted(node_ids, self._max_concurrency))
        for node_id in node_ids:
            self._tasks[node_id] = task

    def _settle_unstarted(
        self, node_ids: list[str], slots: int
    ) -> Callable[[asyncio.Task[None]], None]:
        """A task cancelled before its first step never runs its own except/finally blocks;
        settle its nodes and free its slots here so `stop()` can finish."""

        def settle(task: asyncio.Task[None]) -> None:
            if not task.cancelled():
                return
            for node_id in node_ids:
                self._tasks.pop(node_id, None)
                if self.dag.status[node_id] is NodeStatus.RUNNING:
                    self._cancelled(node_id)
            self._in_flight -= slots

        return settle

    def _skip_ready(self, reason: str, *, budget: bool) -> None:
        """Nodes that could start are not admitted: each, and its dependents, is SKIPPED."""
        for node_id in self.dag.ready():
            self._skip(self.dag.skip(node_id), reason, budget=budget)

    def _exhausted(self) -> bool:
        return degradation(self._budget.pressure()) is Degradation.EXHAUSTED

    async def _run_batch(self, calls: list[BatchCall], number: int) -> None:
        try:
            result = await workflow.execute_child_workflow(
                NodeBatchWorkflow.run,
                NodeBatchRequest(
                    run_id=self._run_id,
                    scenario=self._scenario,
                    provider=self._provider,
                    max_concurrency=self._max_concurrency,
                    calls=calls,
                ),
                id=f"{self._run_id}-batch-{number}",
                static_summary=f"batch {number}: {len(calls)} nodes",
            )
            for outcome in result.outcomes:
                self._record_retries(outcome.node_id, outcome.attempts)
                if outcome.call is not None:
                    self._complete(outcome.node_id, outcome.call, reused=False)
                    self.reusable_next[call_key_of(calls, outcome.node_id)] = outcome.call
                else:
                    code = parse_error_code(outcome.error_type)
                    arguments = next(c.arguments for c in calls if c.node_id == outcome.node_id)
                    message = outcome.error_message or "failed"
                    self._fail(outcome.node_id, arguments, code, message, outcome.attempts)
        except asyncio.CancelledError:
            self._settle_batch(calls, f"batch {number} cancelled", cancelled=True)
        except ChildWorkflowError as error:
            cancelled = isinstance(error.cause, CancelledError)
            self._settle_batch(calls, f"batch {number} failed: {error.cause}", cancelled)
        except BaseException as crash:
            self._crash = crash
            raise
        finally:
            self._in_flight -= self._max_concurrency
            for call in calls:
                self._tasks.pop(call.node_id, None)
        self._launch_ready()

    def _settle_batch(self, calls: list[BatchCall], message: str, cancelled: bool) -> None:
        """A batch that did not return: its unfinished nodes are cancelled when the run is
        stopping, and fail otherwise (one child's failure is not the whole run's)."""
        for call in calls:
            if self.dag.status[call.node_id] is not NodeStatus.RUNNING:
                continue
            if cancelled and self._stop_reason is not None:
                self._cancelled(call.node_id)
            else:
                code = ErrorCode.TOOL_EXECUTION_FAILED
                self._fail(call.node_id, call.arguments, code, message, attempts=0)

    async def _run_node(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        try:
            await self._execute_node(node_id, arguments)
        except asyncio.CancelledError:
            self._cancelled(node_id)
        except BaseException as crash:  # a bug here must fail the workflow task, not hang it
            self._crash = crash
            raise
        finally:
            self._in_flight -= 1
            self._tasks.pop(node_id, None)
        self._launch_ready()

    async def _execute_node(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        node = self._nodes[node_id]
        spec = self._specs[node.tool]
        outcome = self.outcomes[node_id]
        if spec.native_wait is not None:
            await self._native_wait(node_id, spec.native_wait, arguments)
            return
        needs_approval = spec.requires_approval or (
            spec.side_effects and self._approve_side_effects
        )
        if needs_approval and not await self._approved(node_id, node.tool, arguments):
            return
        self._recorder.emit(
            TraceKind.NODE_START, role=outcome.role, node_id=node_id, tool=node.tool
        )
        fault = next((f for f in self._faults if f.matches(node.tool, arguments)), None)
        try:
            result = await run_tool_call(
                ToolCallRequest(
                    run_id=self._run_id,
                    scenario=self._scenario,
                    node_id=node_id,
                    tool=node.tool,
                    arguments=arguments,
                    provider=self._provider,
                    fault=fault,
                ),
                local=spec.local,
                side_effects=spec.side_effects,
                summary=tool_call_summary(node_id, node.tool, arguments),
            )
        except ActivityError as error:
            if self._stop_reason is not None and isinstance(error.cause, CancelledError):
                self._cancelled(node_id)
                return
            policy = SIDE_EFFECT_RETRY if spec.side_effects else TOOL_RETRY
            failure = ActivityFailure(error, policy.maximum_attempts or 1)
            self._record_retries(node_id, failure.attempts)
            if spec.side_effects and failure.code is ErrorCode.TIMEOUT:
                await self._reconcile(node_id, node.tool, arguments, failure.message)
                return
            self._fail(node_id, arguments, failure.code, failure.message, failure.attempts)
            return
        self._record_retries(node_id, result.attempt)
        if spec.completion is ToolCompletion.ASYNC_OPERATION:
            await self._await_operation(node_id, arguments, result)
            return
        if not spec.side_effects:
            self.reusable_next[call_key(node.tool, arguments)] = result
        self._complete(node_id, result, reused=False)

    def _record_retries(self, node_id: str, attempts: int) -> None:
        """Temporal retried inside the activity; charge and trace each extra attempt."""
        outcome = self.outcomes[node_id]
        for attempt in range(2, attempts + 1):
            self._budget.charge_tool_call()
            self._recorder.emit(
                TraceKind.NODE_RETRY,
                role=outcome.role,
                node_id=node_id,
                tool=outcome.tool,
                message=f"attempt {attempt}",
                data={"attempt": attempt},
            )

    def _complete(self, node_id: str, call: ToolCallResult, *, reused: bool) -> None:
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.DONE
        outcome.result = call.result
        outcome.attempts = 0 if reused else call.attempt
        outcome.reused = reused
        self._finish_timing(outcome)
        outcome.tool_latency_ms = round(call.latency_ms, 3)
        self.results[node_id] = call.result
        tokens = None
        if call.usage is not None and not reused:
            outcome.usage = call.usage
            self.usage = self.usage.plus(call.usage)
            self._budget.charge_tokens(call.usage.total_tokens, call.usage.cost_usd)
            tokens = call.usage.total_tokens
        self.dag.complete(node_id)
        self._recorder.emit(
            TraceKind.NODE_FINISH,
            role=outcome.role,
            node_id=node_id,
            tool=outcome.tool,
            status=outcome.status.value,
            latency_ms=outcome.latency_ms,
            tokens=tokens,
            cost_usd=outcome.usage.cost_usd if outcome.usage else None,
            message="reused the result of an identical earlier node" if reused else None,
            data={"attempts": outcome.attempts, "reused": reused},
        )

    def _fail(
        self,
        node_id: str,
        arguments: dict[str, JsonValue],
        code: ErrorCode,
        message: str,
        attempts: int,
    ) -> None:
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.FAILED
        outcome.error_code = code.value
        outcome.error_message = message
        outcome.attempts = attempts
        self._finish_timing(outcome)
        self.failures.append(
            FailureContext(
                node_id=node_id, tool=outcome.tool, arguments=arguments, code=code, message=message
            )
        )
        if classify(code) is ErrorClass.FATAL and self.halted_by is None:
            self.halted_by = f"node '{node_id}' failed with {code.value}"
            self._stop_waiting_nodes(f"run halted: {self.halted_by}")
        skipped = self.dag.fail(node_id)
        self._recorder.emit(
            TraceKind.NODE_FAIL,
            role=outcome.role,
            node_id=node_id,
            tool=outcome.tool,
            status=outcome.status.value,
            latency_ms=outcome.latency_ms,
            message=f"{code.value}: {message}",
            data={"attempts": attempts, "error_code": code.value},
        )
        self._skip(skipped, f"dependency '{node_id}' failed", budget=False)

    def _stop_waiting_nodes(self, reason: str) -> None:
        """After a HALT, nodes parked on a wait would only hold the run open until their
        deadlines; cancel them now (running activities are left to finish)."""
        waiting = [
            node_id
            for node_id in self.dag.running()
            if self.outcomes[node_id].status in (NodeStatus.WAITING, NodeStatus.UNKNOWN)
        ]
        if waiting:
            self._stop_reason = self._stop_reason or reason
        for node_id in waiting:
            task = self._tasks.get(node_id)
            if task is not None:
                task.cancel()

    def _cancelled(self, node_id: str) -> None:
        outcome = self.outcomes[node_id]
        self._finish_timing(outcome)
        reason = self._stop_reason or "cancelled"
        self._desk.cancel_pending(reason, node_id=node_id)
        self._skip(self.dag.skip(node_id), reason, budget=reason == OUT_OF_TIME_REASON)

    def _skip(self, node_ids: list[str], reason: str, *, budget: bool) -> None:
        for skipped_id in node_ids:
            outcome = self.outcomes[skipped_id]
            outcome.status = NodeStatus.SKIPPED
            outcome.error_message = reason
            if budget:
                self.budget_skips += 1
            self._recorder.emit(
                TraceKind.NODE_SKIP,
                role=outcome.role,
                node_id=skipped_id,
                tool=outcome.tool,
                status=NodeStatus.SKIPPED.value,
                message=reason,
            )

    @staticmethod
    def _finish_timing(outcome: NodeOutcome) -> None:
        outcome.finished_at = workflow.now()
        if outcome.started_at is not None:
            elapsed = outcome.finished_at - outcome.started_at
            outcome.latency_ms = round(elapsed.total_seconds() * 1000, 3)


def call_key_of(calls: list[BatchCall], node_id: str) -> str:
    call = next(c for c in calls if c.node_id == node_id)
    return call_key(call.tool, call.arguments)
