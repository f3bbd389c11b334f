"""What `harness run` shows while a run runs: each node as it starts, finishes, fails, retries
or is skipped, each wait as it opens (with the command that answers it) and is delivered, and
the run's decisions, one plain line each on stderr, with the time since the run began and the
budget pressure. It reads the run's trace with a query once a second: nothing is added to the
run's history, and the load on the server is one query a second whatever the run's size."""

from __future__ import annotations

import asyncio

from temporalio.client import Client, WorkflowQueryFailedError
from temporalio.service import RPCError

from harness.trace import TraceEvent, TraceKind
from harness.wait_book import WaitStatus
from starter.deliveries import describe_wait
from starter.output import note
from workflows import AgentRunWorkflow

POLL_SECONDS = 1.0
SHOWN = frozenset(
    {
        TraceKind.MEMORY_RETRIEVE,
        TraceKind.PLANNING_FINISH,
        TraceKind.VALIDATION_FINISH,
        TraceKind.NODE_START,
        TraceKind.NODE_FINISH,
        TraceKind.NODE_FAIL,
        TraceKind.NODE_RETRY,
        TraceKind.NODE_SKIP,
        TraceKind.WAIT_DELIVER,
        TraceKind.WAIT_EXPIRE,
        TraceKind.RECOVERY_DECIDE,
        TraceKind.VERIFICATION_FINISH,
    }
)
"""wait.create is shown from the waits query, with the command that answers it."""


def progress_line(event: TraceEvent, began: TraceEvent) -> str:
    offset = (event.at - began.at).total_seconds()
    parts = [f"{offset:7.2f}s", event.kind.value]
    parts += [part for part in (event.node_id, event.tool, event.status) if part]
    if event.latency_ms is not None and event.kind is TraceKind.NODE_FINISH:
        parts.append(f"{event.latency_ms:.0f} ms")
    parts.append(f"pressure {event.pressure:.2f}")
    line = "  ".join(parts)
    if event.message and event.kind is not TraceKind.NODE_START:
        line += f"  · {event.message[:160]}"
    return line


class Progress:
    """The lines shown so far of one run: polled while it runs, finished from its result."""

    def __init__(self, client: Client, run_id: str, *, quiet: bool = False) -> None:
        """`quiet`: only the waits, no progress lines."""
        self._handle = client.get_workflow_handle(run_id)
        self._run_id = run_id
        self._quiet = quiet
        self._shown: set[str] = set()
        """Events already shown, by their whole content: the trace is kept in time order, so
        an event (a retry, stamped when it began) can land before ones shown already."""
        self._announced: set[str] = set()

    async def follow(self) -> None:
        """Print the run's progress until cancelled (the caller stops it when the run ends)."""
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                if not self._quiet:
                    self.show(await self._handle.query(AgentRunWorkflow.trace))
                waits = await self._handle.query(AgentRunWorkflow.waits)
            except (RPCError, WorkflowQueryFailedError):
                continue  # not started yet, or a workflow task that failed: ask again
            for wait in waits:
                if wait.status is WaitStatus.PENDING and wait.id not in self._announced:
                    self._announced.add(wait.id)
                    note(f"waiting: {describe_wait(self._run_id, wait)}")

    def show(self, events: list[TraceEvent]) -> None:
        """The events not shown yet: after the last poll, the rest come from the result."""
        if self._quiet:
            return
        for event in new_events(events, self._shown):
            if event.kind in SHOWN:
                note(progress_line(event, events[0]))


def new_events(events: list[TraceEvent], shown: set[str]) -> list[TraceEvent]:
    """The events not in `shown`, in trace order; `shown` takes them."""
    fresh = []
    for event in events:
        key = event.model_dump_json()
        if key not in shown:
            shown.add(key)
            fresh.append(event)
    return fresh
