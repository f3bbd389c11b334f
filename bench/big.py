"""`python -m bench big [N]`: the documented plan maximum (N = MAX_PLAN_NODES = 20,000 nodes: a
fan-in of N - 1 zero-latency leaves and the final node) runs to the end, with no failed workflow
task. Its baseline is the same harness on a plan a tenth of the size (2,000 nodes), on the
same server and worker, so the ratio says how the cost per node grows with the plan. (The
minimal baseline cannot run it: one history of 20,000 activities is about 60,000 events, past
Temporal's 51,200.) It takes minutes: not in CI, not in `all`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench import plans
from bench.drive import RunFailed, run_harness, synthetic_request
from bench.env import HARNESS_WORKER, dev_server, log, worker_process
from bench.history import HistoryStats, analyze, chain_histories
from bench.report import Measurement, measure
from harness.engine.bounds import MAX_PLAN_NODES
from harness.engine.run import RunPhase

DEFAULT_NODES = MAX_PLAN_NODES
TIMEOUT_S_PER_NODE = 0.1  # the other benches' 0.1 s per node, after 120 s
BASELINE_FRACTION = 10


@dataclass
class BigRun:
    nodes: int
    seconds: float | None = None
    stats: HistoryStats | None = None
    error: str | None = None


async def run(count: int = DEFAULT_NODES) -> list[Measurement]:
    bench = f"big{count}"
    small = max(count // BASELINE_FRACTION, 2)
    async with dev_server() as server, worker_process(server, HARNESS_WORKER, "big") as worker:
        runs: list[BigRun] = []
        for nodes, label in ((2, "warmup"), (small, f"big{small}"), (count, bench)):
            log(f"{label}: a fan-in of {nodes} nodes (harness only)")
            dag = plans.fanout(nodes - 1)
            request = synthetic_request(dag.to_plan())
            big = BigRun(nodes)
            try:
                result, timed = await run_harness(
                    server.client,
                    worker.task_queue,
                    request,
                    timeout=120 + TIMEOUT_S_PER_NODE * nodes,
                    label=label,
                )
            except RunFailed as error:
                big.error, failed = str(error), error.timed
                histories = await chain_histories(server.client, failed.workflow_id, failed.run_id)
            else:
                big.seconds = timed.seconds
                if result.status is not RunPhase.SUCCEEDED:
                    big.error = f"run ended {result.status.value}: {result.error}"
                histories = await chain_histories(server.client, timed.workflow_id, timed.run_id)
            big.stats = analyze(histories, dag)
            outcome = big.error or f"completed in {big.seconds:.1f} s"
            log(f"{label}: {outcome}; failed workflow tasks: {big.stats.failed_workflow_tasks}")
            runs.append(big)
    return _rows(bench, runs[1], runs[2])


@dataclass(frozen=True)
class HistoryFigure:
    """One figure of a run's histories (a HistoryStats field), the big plan's against its
    baseline's: a row of the bench's output."""

    field: str
    unit: str
    metric: str | None = None
    """Its name in the output (harness.METRIC), when it is not the field's."""
    target: str | None = None
    meets: Callable[[float], bool] | None = None
    note: str | None = None
    note_field: str | None = None
    """A HistoryStats field whose text, when there is any, is the row's note."""


HISTORY_FIGURES = (
    HistoryFigure(
        "failed_workflow_tasks",
        "tasks",
        target="0",
        meets=lambda failed: failed == 0,
        note_field="failure_causes",
    ),
    HistoryFigure("events", "events"),
    HistoryFigure(
        "max_run_events", "events", target="<= 10240", meets=lambda events: events <= 10240
    ),
    HistoryFigure("runs", "runs", metric="runs_in_chain"),
    HistoryFigure("workflow_tasks", "tasks"),
    HistoryFigure(
        "wft_work_max_ms",
        "ms",
        note="the longest workflow task; the SDK fails an activation that runs 2 s",
    ),
)
"""The history rows, in the order they are printed."""


def _rows(bench: str, baseline: BigRun, big: BigRun) -> list[Measurement]:
    vs = f"big{baseline.nodes}"

    def per_node_ms(run: BigRun) -> float | None:
        return None if run.seconds is None else run.seconds * 1000 / run.nodes

    return [
        measure(
            bench,
            "harness.completed",
            0.0 if big.error else 1.0,
            "bool",
            target="completes",
            met=big.error is None,
            note=big.error,
        ),
        measure(bench, "harness.wall_s", big.seconds, "s", baseline=baseline.seconds, vs=vs),
        measure(
            bench,
            "harness.wall_ms_per_node",
            per_node_ms(big),
            "ms",
            baseline=per_node_ms(baseline),
            vs=f"{vs}.wall_ms_per_node",
        ),
        *(_history_row(bench, figure, big.stats, baseline.stats, vs) for figure in HISTORY_FIGURES),
    ]


def _history_row(
    bench: str,
    figure: HistoryFigure,
    stats: HistoryStats | None,
    base: HistoryStats | None,
    vs: str,
) -> Measurement:
    value = _stat(stats, figure.field)
    note = figure.note
    if figure.note_field is not None and stats is not None:
        note = str(getattr(stats, figure.note_field)) or None
    return measure(
        bench,
        f"harness.{figure.metric or figure.field}",
        value,
        figure.unit,
        baseline=_stat(base, figure.field),
        vs=vs,
        target=figure.target,
        met=None if value is None or figure.meets is None else figure.meets(value),
        note=note,
    )


def _stat(of: HistoryStats | None, name: str) -> float | None:
    value = None if of is None else getattr(of, name)
    return None if value is None else float(value)
