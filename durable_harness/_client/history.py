"""Rebuilding a run's trace from its workflow history alone, and its table.

The table is fixed-width text, not a rich table, on purpose: one event is one line whatever
the terminal's width (rich fits a table to the terminal and wraps long cells), so `harness
trace RUN | grep node.fail` finds every failure whole.

The history is replayed locally through the workflow code itself, so the trace it yields is the
one the workflow held at the last recorded event: for finished, failed and running runs, and
long after the worker that ran it is gone. No worker and no query are involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from temporalio import workflow
from temporalio.client import Client, WorkflowHistory
from temporalio.service import RPCError
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    Replayer,
    UnsandboxedWorkflowRunner,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from durable_harness.exceptions import NotFound, RunFailed
from harness.engine.run import RunResult, RunStatus
from harness.engine.trace import TraceEvent, TraceKind
from harness.waits.wait_book import Wait
from infra.plugin import HarnessPlugin
from workflows import AgentRunWorkflow


class _KeepInstance(Interceptor):
    """Keeps a reference to the replayed workflow object so its state can be read afterwards."""

    def __init__(self, sink: list[Any]) -> None:
        self._sink = sink

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        sink = self._sink

        class _Inbound(WorkflowInboundInterceptor):
            async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
                sink.append(workflow.instance())
                return await super().execute_workflow(input)

        return _Inbound


class ReplayedRun:
    def __init__(
        self, trace: list[TraceEvent], status: RunStatus, waits: list[Wait], result: RunResult
    ) -> None:
        self.trace = trace
        self.status = status
        self.waits = waits
        self.result = result


async def replay_run(history: WorkflowHistory) -> ReplayedRun:
    instances: list[Any] = []
    replayer = Replayer(
        workflows=[],
        plugins=[HarnessPlugin()],
        interceptors=[_KeepInstance(instances)],
        workflow_runner=UnsandboxedWorkflowRunner(),
    )
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    if result.replay_failure is not None or not instances:
        raise RunFailed(f"cannot replay run {history.workflow_id}: {result.replay_failure}")
    run: AgentRunWorkflow = instances[-1]
    return ReplayedRun(
        trace=list(run.trace()), status=run.status(), waits=run.waits(), result=run.final_result()
    )


async def fetch_history(client: Client, run_id: str) -> WorkflowHistory:
    try:
        return await client.get_workflow_handle(run_id).fetch_history()
    except RPCError as error:
        raise NotFound(f"no run with id '{run_id}': {error.message}") from error


async def trace_of(client: Client, run_id: str) -> ReplayedRun:
    return await replay_run(await fetch_history(client, run_id))


SAYS_WHY = frozenset(
    {
        TraceKind.NODE_FAIL,
        TraceKind.NODE_SKIP,
        TraceKind.NODE_PROBE,
        TraceKind.WAIT_REJECT,
        TraceKind.WAIT_EXPIRE,
        TraceKind.RECOVERY_DECIDE,
        TraceKind.MEMORY_RETRIEVE,
        TraceKind.MEMORY_RECORD,
        TraceKind.CONTRACT_LOAD,
        TraceKind.AGENT_TURN,
        TraceKind.AGENT_CALL,
    }
)
"""Events whose message is the point: why a node failed or was skipped, why a delivery was
refused, what recovery decided, what the planner remembered and what the run is held to, and
what an agent's turn asked for and why its call failed. The table prints it after the pressure."""


def trace_table(events: Sequence[TraceEvent]) -> list[str]:
    """Time offset, kind, node, tool, status, latency, pressure, and for failures, skips,
    refusals and decisions, the message: one line per event."""
    if not events:
        return ["(no events)"]
    start = events[0].at
    lines = [
        f"{'+s':>8}  {'kind':<20} {'node':<22} {'tool':<20} {'status':<10} {'ms':>8}  pressure  why"
    ]
    for event in events:
        offset = (event.at - start).total_seconds()
        latency = f"{event.latency_ms:.0f}" if event.latency_ms is not None else ""
        why = event.message if event.kind in SAYS_WHY and event.message else ""
        line = (
            f"{offset:>8.3f}  {event.kind.value:<20} {_node(event):<22} "
            f"{event.tool or '':<20} {event.status or '':<10} {latency:>8}  {event.pressure:.2f}"
        )
        lines.append(f"{line}      {_one_line(why)}".rstrip())
    return lines


def _node(event: TraceEvent) -> str:
    """The node an event is about; an agent's call under its node, as `scout.t1.c2` (the
    call's own id in the agent's child workflow)."""
    call_id = event.data.get("call_id") if event.kind is TraceKind.AGENT_CALL else None
    return call_id if isinstance(call_id, str) else event.node_id or ""


def _one_line(text: str) -> str:
    return " ".join(text.split())
