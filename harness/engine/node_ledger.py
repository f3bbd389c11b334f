"""The node ledger: the one owner of every node's status, outcome, result and usage.

Each change of a node's state is one call here, and that call also charges the budget and emits
the node's trace event, so status, outcome and trace can never disagree. The DAG bookkeeping
inside only answers "which nodes may start"; the status a reader sees (WAITING for an approval,
UNKNOWN for an uncertain side effect) is the outcome's.

Pure: time comes from the injected clock (workflow time in a workflow).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from pydantic import JsonValue

from harness.catalog.tools import ToolCatalog, ToolSpec
from harness.core.errors import ErrorClass, ErrorCode, FailureContext, classify
from harness.core.plan import Plan, PlanNode
from harness.core.usage import TokenUsage
from harness.engine.agent_loop import AgentStep, StepKind
from harness.engine.budget import Budget
from harness.engine.dag import DagState, NodeStatus
from harness.engine.messages import AttemptTiming, ToolCallResult
from harness.engine.reuse import call_key
from harness.engine.run import NodeOutcome, RunCounts
from harness.engine.trace import AgentRole, TraceKind, TraceLog

REUSED_MESSAGE = "reused the result of an identical earlier node"


class NodeLedger:
    def __init__(
        self,
        plan: Plan,
        catalog: ToolCatalog,
        budget: Budget,
        trace: TraceLog,
        clock: Callable[[], datetime],
    ) -> None:
        self._dag = DagState(plan)
        self._budget = budget
        self._trace = trace
        self._clock = clock
        self.nodes = {node.id: node for node in plan.nodes}
        self.catalog = catalog
        self.specs = {spec.name: spec for spec in catalog.tools}
        by_name = catalog.by_name()
        self.outcomes = {
            node.id: NodeOutcome(id=node.id, tool=node.tool, tool_role=_role(by_name, node.tool))
            for node in plan.nodes
        }
        self.results: dict[str, JsonValue] = {}
        self.failures: list[FailureContext] = []
        self.fresh_results: dict[str, ToolCallResult] = {}
        self.usage = TokenUsage()
        self.agent_usage = TokenUsage()
        """What agent nodes' loops spent (their own role): charged to the budget as they
        report it (workflows.agent_nodes), not here."""
        self.budget_skips = 0
        self.halted_by: str | None = None
        self._reserved: dict[str, int] = {}

    # -- reads ----------------------------------------------------------------------------

    def pressure(self) -> float:
        """The run's budget pressure now (max utilisation)."""
        return self._budget.pressure()

    def node(self, node_id: str) -> PlanNode:
        return self.nodes[node_id]

    def spec(self, node_id: str) -> ToolSpec:
        return self.specs[self.nodes[node_id].tool]

    def status(self, node_id: str) -> NodeStatus:
        return self.outcomes[node_id].status

    def statuses(self) -> dict[str, NodeStatus]:
        return {node_id: outcome.status for node_id, outcome in self.outcomes.items()}

    def is_finished(self) -> bool:
        return self._dag.is_finished()

    def has_ready(self) -> bool:
        return self._dag.has_ready()

    def ready(self) -> list[str]:
        return self._dag.ready()

    def ready_count(self) -> int:
        return self._dag.ready_count()

    def is_ready(self, node_id: str) -> bool:
        return self._dag.is_ready(node_id)

    def unsettled(self) -> list[str]:
        """Nodes that were admitted and have not finished (running or held), in plan order."""
        return self._dag.running()

    def is_unsettled(self, node_id: str) -> bool:
        return self._dag.status[node_id] is NodeStatus.RUNNING

    def held(self) -> list[str]:
        """Admitted nodes parked on a wait (an approval, an operation, a reconcile)."""
        return [
            node_id
            for node_id in self._dag.running()
            if self.outcomes[node_id].status in (NodeStatus.WAITING, NodeStatus.UNKNOWN)
        ]

    def counts(self, *, replans: int) -> RunCounts:
        return RunCounts(
            nodes=len(self.outcomes),
            done=self._dag.count(NodeStatus.DONE),
            failed=self._dag.count(NodeStatus.FAILED),
            skipped=self._dag.count(NodeStatus.SKIPPED),
            tool_calls=self._budget.usage.tool_calls,
            replans=replans,
        )

    # -- admission ------------------------------------------------------------------------

    def admit_next(self) -> str:
        """Take the first ready node (plan order) and start it."""
        (node_id,) = self._dag.pop_ready(1)
        self._start(node_id)
        return node_id

    def admit(self, node_id: str) -> None:
        """Take one specific ready node and start it."""
        self._dag.take(node_id)
        self._start(node_id)

    def _start(self, node_id: str) -> None:
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.RUNNING
        outcome.started_at = self._clock()

    def charge_call(self) -> None:
        """One call charged at admission; its retries when they are known (runs before 0.10)."""
        self._budget.charge_tool_call()

    def reserve_call(self, node_id: str) -> int:
        """Reserve the attempts the admitted node's call may make (its tool's, or what the
        budget has left): the call's retry policy allows no more. Charged when it finishes."""
        granted = self._budget.reserve_tool_calls(self.spec(node_id).attempts_per_call())
        self._reserved[node_id] = granted
        return granted

    def reserved_attempts(self, node_id: str) -> int | None:
        """The attempts the node's call reserved; None when it reserved none (runs before
        0.10) or has been charged already."""
        return self._reserved.get(node_id)

    def _settle(self, node_id: str, attempts: int) -> None:
        """Charge a finished call's attempts and give back the rest of its reservation. A call
        admitted counts once even if it never ran (an approval refused, a call cancelled), as
        it did when calls were charged at admission."""
        reserved = self._reserved.pop(node_id, None)
        if reserved is not None:
            self._budget.settle_tool_calls(reserved, max(attempts, 1))

    # -- what happens to an admitted node -------------------------------------------------

    def call_started(self, node_id: str) -> None:
        outcome = self.outcomes[node_id]
        self._trace.emit(
            TraceKind.NODE_START,
            role=AgentRole.WORKER,
            tool_role=outcome.tool_role,
            node_id=node_id,
            tool=outcome.tool,
        )

    def hold(self, node_id: str, status: NodeStatus, note: str | None = None) -> None:
        """Park a running node on a wait (WAITING, UNKNOWN) or take it back (RUNNING)."""
        outcome = self.outcomes[node_id]
        outcome.status = status
        if note is not None:
            outcome.error_message = note

    def probed(self, node_id: str, state: str, detail: str) -> None:
        """The system a side effect acts on was asked what became of the call."""
        outcome = self.outcomes[node_id]
        self._trace.emit(
            TraceKind.NODE_PROBE,
            role=AgentRole.WORKER,
            tool_role=outcome.tool_role,
            node_id=node_id,
            tool=outcome.tool,
            status=state,
            message=detail,
            data={"state": state},
        )

    def retried(
        self, node_id: str, attempts: int, started: Mapping[int, datetime] | None = None
    ) -> None:
        """The call finished after `attempts`: charge them (each extra one, when only the first
        was charged at admission) and trace each retry, at the time it `started` when the
        activity reported it (else now, and the event says so)."""
        outcome = self.outcomes[node_id]
        started = started or {}
        reserved = node_id in self._reserved
        self._settle(node_id, attempts)
        for attempt in range(2, attempts + 1):
            if not reserved:
                self._budget.charge_tool_call()
            at = started.get(attempt)
            self._trace.emit(
                TraceKind.NODE_RETRY,
                role=AgentRole.WORKER,
                tool_role=outcome.tool_role,
                node_id=node_id,
                tool=outcome.tool,
                message=f"attempt {attempt}" if at else f"attempt {attempt} (start not reported)",
                data={"attempt": attempt},
                at=at,
            )

    def complete(
        self,
        node_id: str,
        call: ToolCallResult,
        *,
        reused: bool = False,
        arguments: dict[str, JsonValue] | None = None,
        agent_usage: TokenUsage | None = None,
    ) -> None:
        """DONE with `call`'s result; `arguments` given keeps the result for later attempts.
        An agent node's `agent_usage` is its loop's, already charged to the budget."""
        self._settle(node_id, 1 if reused else call.attempt)
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.DONE
        outcome.result = call.result
        outcome.attempts = 0 if reused else call.attempt
        outcome.reused = reused
        self._finish_timing(outcome)
        outcome.tool_latency_ms = round(call.latency_ms, 3)
        self.results[node_id] = call.result
        if arguments is not None:
            self.fresh_results[call_key(outcome.tool, arguments)] = call
        tokens = None
        if call.usage is not None and not reused:
            outcome.usage = call.usage
            self.usage = self.usage.plus(call.usage)
            self._budget.charge_tokens(call.usage.total_tokens, call.usage.cost_usd)
            tokens = call.usage.total_tokens
        if agent_usage is not None:
            outcome.usage = agent_usage
            self.agent_usage = self.agent_usage.plus(agent_usage)
            tokens = agent_usage.total_tokens
        self._dag.complete(node_id)
        timing = None if reused else call.timing
        self._trace.emit(
            TraceKind.NODE_FINISH,
            role=AgentRole.WORKER,
            tool_role=outcome.tool_role,
            node_id=node_id,
            tool=outcome.tool,
            status=outcome.status.value,
            latency_ms=_own_latency(timing, outcome),
            tokens=tokens,
            cost_usd=outcome.usage.cost_usd if outcome.usage else None,
            message=REUSED_MESSAGE if reused else None,
            data={"attempts": outcome.attempts, "reused": reused, **_scheduling(timing, outcome)},
            at=timing.finished_at if timing else None,
        )

    def agent_steps(self, node_id: str, steps: list[AgentStep]) -> None:
        """The turns and calls of an agent node's loop, under the node in the trace."""
        outcome = self.outcomes[node_id]
        for step in steps:
            turn = step.kind is StepKind.TURN
            self._trace.emit(
                TraceKind.AGENT_TURN if turn else TraceKind.AGENT_CALL,
                role=AgentRole.AGENT,
                tool_role=outcome.tool_role,
                node_id=node_id,
                tool=outcome.tool if turn else step.tool,
                status="ok" if step.ok else "failed",
                latency_ms=(step.finished_at - step.started_at).total_seconds() * 1000,
                tokens=step.usage.total_tokens if step.usage else None,
                cost_usd=step.usage.cost_usd if step.usage else None,
                message=f"turn {step.turn}: {step.message}" if turn else step.message,
                data={
                    "turn": step.turn,
                    "call_id": step.call_id,
                    "attempts": step.attempts,
                    **({"error_code": step.error_code} if step.error_code else {}),
                },
                at=step.finished_at,
            )

    def fail(
        self,
        node_id: str,
        arguments: dict[str, JsonValue],
        code: ErrorCode,
        message: str,
        attempts: int,
        timing: AttemptTiming | None = None,
    ) -> None:
        """FAILED, and every dependent SKIPPED; the first FATAL failure halts the run.
        `timing` is the last attempt's, when its activity reported one."""
        self._settle(node_id, attempts)
        outcome = self.outcomes[node_id]
        outcome.status = NodeStatus.FAILED
        outcome.error_code = code.value
        outcome.error_message = message
        outcome.attempts = attempts
        self._finish_timing(outcome)
        if timing is not None:
            outcome.tool_latency_ms = _own_latency(timing, outcome)
        self.failures.append(
            FailureContext(
                node_id=node_id, tool=outcome.tool, arguments=arguments, code=code, message=message
            )
        )
        if classify(code) is ErrorClass.FATAL and self.halted_by is None:
            self.halted_by = f"node '{node_id}' failed with {code.value}"
        skipped = self._dag.fail(node_id)
        self._trace.emit(
            TraceKind.NODE_FAIL,
            role=AgentRole.WORKER,
            tool_role=outcome.tool_role,
            node_id=node_id,
            tool=outcome.tool,
            status=outcome.status.value,
            latency_ms=_own_latency(timing, outcome),
            message=f"{code.value}: {message}",
            data={"attempts": attempts, "error_code": code.value, **_scheduling(timing, outcome)},
            at=timing.finished_at if timing else None,
        )
        self._mark_skipped(skipped, f"dependency '{node_id}' failed", budget=False)

    def charge_failed(self, node_id: str, usage: TokenUsage) -> None:
        """What a failed call's model calls cost: charged to the run's usage and budget, shown
        on the node and traced (marked when estimated)."""
        outcome = self.outcomes[node_id]
        outcome.usage = usage if outcome.usage is None else outcome.usage.plus(usage)
        self.usage = self.usage.plus(usage)
        self._budget.charge_tokens(usage.total_tokens, usage.cost_usd)
        self._trace.emit(
            TraceKind.USAGE_CHARGE,
            role=AgentRole.WORKER,
            node_id=node_id,
            tool=outcome.tool,
            tokens=usage.total_tokens,
            cost_usd=usage.cost_usd,
            message=f"the failed call of {outcome.tool} cost {usage.total_tokens} tokens"
            + (" (estimated)" if usage.estimated else ""),
            data={"estimated": usage.estimated},
        )

    def cancel(self, node_id: str, reason: str, *, budget: bool) -> None:
        """An admitted node stopped before it finished: SKIPPED, with its dependents."""
        self._settle(node_id, 1)
        self._finish_timing(self.outcomes[node_id])
        self._mark_skipped(self._dag.skip(node_id), reason, budget=budget)

    def skip_ready(self, reason: str, *, budget: bool) -> None:
        """Nodes that could start are not admitted: each, and its dependents, is SKIPPED."""
        for node_id in self._dag.ready():
            self._mark_skipped(self._dag.skip(node_id), reason, budget=budget)

    def _mark_skipped(self, node_ids: list[str], reason: str, *, budget: bool) -> None:
        for skipped_id in node_ids:
            outcome = self.outcomes[skipped_id]
            outcome.status = NodeStatus.SKIPPED
            outcome.error_message = reason
            if budget:
                self.budget_skips += 1
            self._trace.emit(
                TraceKind.NODE_SKIP,
                role=AgentRole.WORKER,
                tool_role=outcome.tool_role,
                node_id=skipped_id,
                tool=outcome.tool,
                status=NodeStatus.SKIPPED.value,
                message=reason,
            )

    def _finish_timing(self, outcome: NodeOutcome) -> None:
        outcome.finished_at = self._clock()
        if outcome.started_at is not None:
            elapsed = outcome.finished_at - outcome.started_at
            outcome.latency_ms = round(elapsed.total_seconds() * 1000, 3)


def _own_latency(timing: AttemptTiming | None, outcome: NodeOutcome) -> float | None:
    """The node's latency in its trace: its last attempt's, by the activity's clock, when the
    activity reported it; else the workflow's, from admission to now."""
    if timing is None:
        return outcome.latency_ms
    return round((timing.finished_at - timing.started_at).total_seconds() * 1000, 3)


def _scheduling(timing: AttemptTiming | None, outcome: NodeOutcome) -> dict[str, JsonValue]:
    """Beside the activity's own latency, the workflow's: queueing, retries and waits too."""
    return {} if timing is None else {"scheduled_ms": outcome.latency_ms}


def _role(specs: dict[str, ToolSpec], tool: str) -> str:
    spec = specs.get(tool)
    return spec.role.value if spec else "UNKNOWN"
