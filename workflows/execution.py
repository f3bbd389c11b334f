"""The event-driven DAG scheduler: a node starts the moment its own dependencies are DONE.

Each node is one activity. Completions that arrive in the same workflow task are handled in one
activation, and the nodes they unblock are scheduled in that same task, so there is no
level-by-level barrier and no extra round trip per completion.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

from workflows.activity_options import TOOL_RETRY, TOOL_TIMEOUT, ActivityFailure, tool_call_summary
from workflows.recorder import TraceRecorder

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

    from activities.tool_runner import ToolActivities
    from harness.binding import BindingError, resolve_arguments
    from harness.budget import Budget
    from harness.dag import DagState, NodeStatus
    from harness.errors import ErrorCode, FailureContext
    from harness.messages import ToolCallRequest, ToolCallResult
    from harness.plan import Plan
    from harness.run import NodeOutcome
    from harness.tools import ToolCatalog
    from harness.trace import TraceKind
    from harness.usage import TokenUsage

BUDGET_EXHAUSTED_REASON = "budget exhausted"


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
    ) -> None:
        self._run_id = run_id
        self._scenario = scenario
        self._plan = plan
        self._catalog = catalog
        self._max_concurrency = max_concurrency
        self._budget = budget
        self._recorder = recorder
        self.dag = DagState(plan)
        self.outcomes = {
            node.id: NodeOutcome(id=node.id, tool=node.tool, role=self._role(node.tool))
            for node in plan.nodes
        }
        self.results: dict[str, JsonValue] = {}
        self.failures: list[FailureContext] = []
        self.usage = TokenUsage()
        self.budget_skips = 0
        self._in_flight = 0
        self._crash: BaseException | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        self._launch_ready()
        await workflow.wait_condition(lambda: self.dag.is_finished() or self._crash is not None)
        if self._crash is not None:
            raise self._crash

    def _role(self, tool: str) -> str:
        spec = self._catalog.get(tool)
        return spec.role.value if spec else "UNKNOWN"

    def _launch_ready(self) -> None:
        free = self._max_concurrency - self._in_flight
        if free <= 0:
            return
        self._budget.set_elapsed(self._recorder.elapsed_seconds())
        if self._budget.pressure() >= 1.0:
            for node_id in self.dag.ready():
                self._skip(self.dag.skip(node_id), BUDGET_EXHAUSTED_REASON, budget=True)
            return
        for node_id in self.dag.pop_ready(free):
            self._in_flight += 1
            self._budget.charge_tool_call()
            task = asyncio.create_task(self._run_node(node_id), name=f"node {node_id}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run_node(self, node_id: str) -> None:
        try:
            await self._execute_node(node_id)
        except BaseException as crash:  # a bug here must fail the workflow task, not hang it
            self._crash = crash
            raise
        finally:
            self._in_flight -= 1
        self._launch_ready()

    async def _execute_node(self, node_id: str) -> None:
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
        self._recorder.emit(
            TraceKind.NODE_START, role=outcome.role, node_id=node_id, tool=node.tool
        )
        try:
            result: ToolCallResult = await workflow.execute_activity_method(
                ToolActivities.run_tool,
                ToolCallRequest(
                    run_id=self._run_id,
                    scenario=self._scenario,
                    node_id=node_id,
                    tool=node.tool,
                    arguments=arguments,
                ),
                start_to_close_timeout=TOOL_TIMEOUT,
                retry_policy=TOOL_RETRY,
                summary=tool_call_summary(node_id, node.tool, arguments),
            )
        except ActivityError as error:
            failure = ActivityFailure(error, TOOL_RETRY.maximum_attempts)
            self._fail(node_id, arguments, failure.code, failure.message, failure.attempts)
            return
        self._complete(node_id, result)

    def _complete(self, node_id: str, call: ToolCallResult) -> None:
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.DONE
        outcome.result = call.result
        outcome.attempts = call.attempt
        outcome.usage = call.usage
        self._finish_timing(outcome)
        outcome.tool_latency_ms = round(call.latency_ms, 3)
        self.results[node_id] = call.result
        tokens = None
        if call.usage is not None:
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
            data={"attempts": call.attempt},
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
