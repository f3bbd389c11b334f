"""What `harness run` shows while a run runs: each node as it starts, finishes, fails, retries or
is skipped, each wait as it opens (with the command that answers it) and is delivered, and the
run's decisions, one line each on stderr with the time since the run began and the budget
pressure. On a terminal a live status line (rich) sits under them: phase, attempt, nodes done,
failed and skipped, pressure and time; off a terminal (`harness run ... | cat`) only the plain
lines are written.

It reads the run with the API's follower (`Run.follow`): one query a second that carries only
the events recorded since the last read, shown in time order (in_time_order). Nothing is added
to the run's history."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from types import TracebackType

from durable_harness._client.deliveries import describe_wait
from durable_harness.client import Run
from durable_harness.exceptions import HarnessError
from harness.engine.progress_page import ProgressPage
from harness.engine.run import RunResult
from harness.engine.trace import TraceEvent, TraceKind
from starter.output import note

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
        TraceKind.AGENT_TURN,
        TraceKind.AGENT_CALL,
        TraceKind.WAIT_DELIVER,
        TraceKind.WAIT_EXPIRE,
        TraceKind.RECOVERY_DECIDE,
        TraceKind.VERIFICATION_FINISH,
    }
)
"""wait.create is shown from the page's open waits, with the command that answers it."""


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


def status_line(run_id: str, page: ProgressPage, seconds: float) -> str:
    """The live line: where the run stands now."""
    counts = page.counts
    nodes = f"{counts.done}/{counts.nodes} nodes done" if counts.nodes else "planning"
    parts = [f"run {run_id}", page.phase.value, f"attempt {page.attempt}", nodes]
    parts += [f"{n} {what}" for n, what in ((counts.failed, "failed"), (counts.skipped, "skipped"))
              if n]  # fmt: skip
    if page.pending:
        parts.append(f"{len(page.pending)} waiting")
    parts += [f"pressure {page.pressure:.2f}", f"{seconds:.0f} s"]
    return " · ".join(parts)


class RunView:
    """The lines shown of one run: fed each page while it runs, finished from its result. Each
    event is shown once (by its whole content: the result's trace repeats those read)."""

    def __init__(self, run_id: str, *, quiet: bool = False) -> None:
        """`quiet`: only the waits, no progress lines."""
        self._run_id = run_id
        self._quiet = quiet
        self._shown: set[str] = set()
        self._announced: set[str] = set()
        self._began: TraceEvent | None = None

    def __enter__(self) -> RunView:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Before the first page: nothing to draw off a terminal."""

    def stop(self) -> None:
        """After the result: nothing to take down off a terminal."""

    def page(self, page: ProgressPage) -> None:
        self._events(page.events)
        for wait in page.pending:
            if wait.id not in self._announced:
                self._announced.add(wait.id)
                self.line(f"waiting: {describe_wait(self._run_id, wait)}")

    def finish(self, result: RunResult) -> None:
        """The events the last page did not carry, from the run's whole trace."""
        self._events(result.trace)

    def line(self, text: str) -> None:
        note(text)

    def _events(self, events: list[TraceEvent]) -> None:
        for event in in_time_order(new_events(events, self._shown)):
            self._began = self._began or event
            if not self._quiet and event.kind in SHOWN:
                self.line(progress_line(event, self._began))


class LiveView(RunView):
    """RunView on a terminal: the same lines, and a spinner with the run's status under them."""

    def __init__(self, run_id: str, *, quiet: bool = False) -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.spinner import Spinner

        super().__init__(run_id, quiet=quiet)
        self._started = time.monotonic()
        self._spinner = Spinner("dots", text=f"run {run_id} · starting")
        self._live = Live(
            self._spinner,
            console=Console(stderr=True, highlight=False),
            refresh_per_second=8,
            transient=True,
        )

    def start(self) -> None:
        self._live.start()

    def stop(self) -> None:
        self._live.stop()

    def page(self, page: ProgressPage) -> None:
        super().page(page)
        seconds = time.monotonic() - self._started
        self._spinner.update(text=status_line(self._run_id, page, seconds))

    def line(self, text: str) -> None:
        self._live.console.print(text, markup=False, soft_wrap=True)


def on_a_terminal() -> bool:
    """Both streams on a terminal that draws (`| cat` or `2> log` get plain lines)."""
    dumb = os.environ.get("TERM", "") in ("", "dumb")
    return sys.stdout.isatty() and sys.stderr.isatty() and not dumb


def view_for(run_id: str, *, quiet: bool = False) -> RunView:
    return LiveView(run_id, quiet=quiet) if on_a_terminal() else RunView(run_id, quiet=quiet)


async def watch(run: Run, view: RunView) -> RunResult:
    """The run's result, with its progress shown in `view` until then."""

    async def follow() -> None:
        try:
            async for page in run.follow():
                view.page(page)
        except Exception as error:  # progress stops; the run and the wait for it go on
            message = error.message if isinstance(error, HarnessError) else repr(error)
            view.line(f"progress stopped: {message}; the result follows when the run ends")

    follower = asyncio.create_task(follow())
    try:
        with view:
            result = await run.result()
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
    view.finish(result)
    return result


def in_time_order(events: list[TraceEvent]) -> list[TraceEvent]:
    """The events by when they happened, those of one moment as they came. A page carries the
    events in the order the run recorded them, which is not their time's: a retry is recorded
    when its call ends, stamped when it began; a batch's outcomes land together when the batch
    ends. The lines read in one poll are shown in time order; an event recorded after lines
    later than it were shown still comes once, with its own time."""
    return sorted(events, key=lambda event: event.at)


def new_events(events: list[TraceEvent], shown: set[str]) -> list[TraceEvent]:
    """The events not in `shown`, in the order given; `shown` takes them."""
    fresh = []
    for event in events:
        key = event.model_dump_json()
        if key not in shown:
            shown.add(key)
            fresh.append(event)
    return fresh
