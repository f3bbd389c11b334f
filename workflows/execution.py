"""The event-driven DAG scheduler: a node starts the moment its own dependencies are DONE.

Each node is one activity. Completions that arrive in the same workflow task are handled in one
activation, and the nodes they unblock are scheduled in that same task, so there is no
level-by-level barrier and no extra round trip per completion.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, CancelledError

from workflows.activity_options import TOOL_RETRY, TOOL_TIMEOUT, ActivityFailure, tool_call_summary
from workflows.recorder import TraceRecorder

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from activities.tool_runner import ToolActivities
    from harness.binding import BindingError, resolve_arguments
    from harness.budget import Budget, Degradation, degradation
    from harness.dag import DagState, NodeStatus
    from harness.errors import ErrorClass, ErrorCode, FailureContext, classify
    from harness.faults import FaultSpec
    from harness.messages import ToolCallRequest, ToolCallResult
    from harness.plan import Plan
    from harness.reuse import call_key
    from harness.run import NodeOutcome
    from harness.tools import ToolCatalog
    from harness.trace import TraceKind
    from harness.usage import TokenUsage

BUDGET_EXHAUSTED_REASON = "budget exhausted"
OUT_OF_TIME_REASON = "budget exhausted: wall-clock limit reached"


class PlanExecutor:
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
        reusable: dict[str, ToolCallResult],
        faults: list[FaultSpec],
        provider: str | None,
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
        self.dag = DagState(plan)
        self.outcomes = {
            node.id: NodeOutcome(id=node.id, tool=node.tool, role=self._role(node.tool))
            for node in plan.nodes
        }
        self.results: dict[str, JsonValue] = {}
        self.failures: list[FailureContext] = []
        self.usage = TokenUsage()
        self.budget_skips = 0
        self.halted_by: str | None = None
        self._in_flight = 0
        self._crash: BaseException | None = None
        self._out_of_time = False
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
        self._out_of_time = True
        self._budget.set_elapsed(self._recorder.elapsed_seconds())
        for node_id in self.dag.ready():
            self._skip(self.dag.skip(node_id), OUT_OF_TIME_REASON, budget=True)
        running = [self._tasks[node_id] for node_id in self.dag.running()]
        for task in running:
            task.cancel()
        await workflow.wait_condition(lambda: self.dag.is_finished() or self._crash is not None)

    def _role(self, tool: str) -> str:
        spec = self._catalog.get(tool)
        return spec.role.value if spec else "UNKNOWN"

    def _launch_ready(self) -> None:
        while self._in_flight < self._max_concurrency and self.dag.ready():
            self._budget.set_elapsed(self._recorder.elapsed_seconds())
            if self.halted_by is not None:
                reason = f"run halted: {self.halted_by}"
                for node_id in self.dag.ready():
                    self._skip(self.dag.skip(node_id), reason, budget=False)
                return
            if degradation(self._budget.pressure()) is Degradation.EXHAUSTED:
                for node_id in self.dag.ready():
                    self._skip(self.dag.skip(node_id), BUDGET_EXHAUSTED_REASON, budget=True)
                return
            (node_id,) = self.dag.pop_ready(1)
            self._admit(node_id)

    def _admit(self, node_id: str) -> None:
        """Resolve arguments; reuse an identical earlier result or start the activity."""
        node = self._plan.node(node_id)
        spec = self._catalog.get(node.tool) if node else None
        assert node is not None and spec is not None, "the plan was validated"
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.RUNNING
        outcome.started_at = workflow.now()
        try:
            arguments = resolve_arguments(node, spec, self.results)
        except BindingError as error:
            self._fail(node_id, {}, ErrorCode.INVALID_ARGUMENT, str(error), attempts=0)
            return
        key = call_key(node.tool, arguments)
        if key in self._reusable and not spec.side_effects:
            self._complete(node_id, self._reusable[key], reused=True)
            return
        self._budget.charge_tool_call()
        self._in_flight += 1
        task = asyncio.create_task(self._run_node(node_id, arguments), name=f"node {node_id}")
        self._tasks[node_id] = task

    async def _run_node(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        try:
            await self._execute_node(node_id, arguments)
        except BaseException as crash:  # a bug here must fail the workflow task, not hang it
            self._crash = crash
            raise
        finally:
            self._in_flight -= 1
            self._tasks.pop(node_id, None)
        self._launch_ready()

    async def _execute_node(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        node = self._plan.node(node_id)
        spec = self._catalog.get(node.tool) if node else None
        assert node is not None and spec is not None, "the plan was validated"
        outcome = self.outcomes[node_id]
        self._recorder.emit(
            TraceKind.NODE_START, role=outcome.role, node_id=node_id, tool=node.tool
        )
        fault = next((f for f in self._faults if f.matches(node.tool, arguments)), None)
        try:
            result: ToolCallResult = await workflow.execute_activity_method(
                ToolActivities.run_tool,
                ToolCallRequest(
                    run_id=self._run_id,
                    scenario=self._scenario,
                    node_id=node_id,
                    tool=node.tool,
                    arguments=arguments,
                    provider=self._provider,
                    fault=fault,
                ),
                start_to_close_timeout=TOOL_TIMEOUT,
                retry_policy=TOOL_RETRY,
                summary=tool_call_summary(node_id, node.tool, arguments),
            )
        except ActivityError as error:
            if self._out_of_time and isinstance(error.cause, CancelledError):
                self._cancelled(node_id)
                return
            failure = ActivityFailure(error, TOOL_RETRY.maximum_attempts or 1)
            self._record_retries(node_id, failure.attempts)
            self._fail(node_id, arguments, failure.code, failure.message, failure.attempts)
            return
        except asyncio.CancelledError:
            self._cancelled(node_id)
            return
        self._record_retries(node_id, result.attempt)
        if not spec.side_effects:
            self._reusable[call_key(node.tool, arguments)] = result
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

    def _cancelled(self, node_id: str) -> None:
        outcome = self.outcomes[node_id]
        self._finish_timing(outcome)
        self._skip(self.dag.skip(node_id), OUT_OF_TIME_REASON, budget=True)

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
