"""One DAG through the harness and the naive workflow (each on its own worker process, taking
turns on the bench's dev server), plus the asyncio walker. bench.rows turns the result into
measurements."""

from __future__ import annotations

from dataclasses import dataclass, field

from temporalio.client import WorkflowHistory

from bench.drive import RunFailed, Timed, run_harness, run_naive, synthetic_request
from bench.env import (
    HARNESS_WORKER,
    NAIVE_WORKER,
    BenchError,
    Server,
    WorkerProcess,
    dev_server,
    log,
    worker_process,
)
from bench.history import HistoryStats, analyze, chain_histories
from bench.naive import naive_request
from bench.plans import IN_FLIGHT_CAP, BenchDag, fanout
from bench.walker import walk
from harness.engine.run import RunPhase, RunRequest, RunResult

WARMUP = fanout(2)


@dataclass
class Side:
    """One system's run of the DAG (the median of the repeats)."""

    name: str
    timed: Timed | None = None
    client_s: float | None = None
    workflow_s: float | None = None
    execute_s: float | None = None
    pre_execute_s: float | None = None
    post_execute_s: float | None = None
    result_kb: float | None = None
    stats: HistoryStats | None = None
    histories: list[WorkflowHistory] = field(default_factory=list)
    idle_rss_mb: float | None = None
    peak_rss_mb: float | None = None
    worker_cpu_s: float | None = None
    thread_cpu_s: dict[str, float] = field(default_factory=dict)
    server_cpu_s: float | None = None
    error: str | None = None


@dataclass
class Comparison:
    dag: BenchDag
    harness: Side
    naive: Side
    walker_s: float
    max_concurrency: int
    repeat: int
    spread: str = ""


class Probe:
    """CPU of the worker (per kind of thread) and of the server across one run."""

    def __init__(self, server: Server, worker: WorkerProcess) -> None:
        self._server, self._worker = server, worker
        self._server_cpu, self._cpu = server.cpu_seconds(), worker.cpu_seconds()
        self._threads = worker.thread_cpu()

    def fill(self, side: Side) -> None:
        side.worker_cpu_s = _delta(self._worker.cpu_seconds(), self._cpu)
        side.server_cpu_s = _delta(self._server.cpu_seconds(), self._server_cpu)
        after = self._worker.thread_cpu()
        side.thread_cpu_s = {kind: after[kind] - self._threads.get(kind, 0.0) for kind in after}


def _delta(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


def _median(sides: list[Side]) -> Side:
    timed = sorted((side for side in sides if side.client_s is not None), key=_client_s)
    return timed[(len(timed) - 1) // 2] if timed else sides[0]


def _client_s(side: Side) -> float:
    return side.client_s or 0.0


async def compare(
    dag: BenchDag, *, max_concurrency: int | None = None, repeat: int = 1
) -> Comparison:
    """Both workflows on one dev server, alternating (naive, harness) `repeat` times; medians."""
    timeout = 120 + 0.1 * dag.size + dag.critical_path_ms() / 1000 * 3
    concurrency = max_concurrency or min(dag.size, IN_FLIGHT_CAP)
    naive_runs: list[Side] = []
    harness_runs: list[Side] = []
    async with (
        dev_server() as server,
        worker_process(server, NAIVE_WORKER, "naive") as naive_worker,
        worker_process(server, HARNESS_WORKER, "harness") as harness_worker,
    ):
        client = server.client
        await run_naive(
            client, naive_worker.task_queue, naive_request(WARMUP), timeout=60, label="warmup"
        )
        warm = synthetic_request(WARMUP.to_plan())
        await run_harness(client, harness_worker.task_queue, warm, timeout=60, label="warmup")
        for index in range(repeat):
            log(f"{dag.name} ({index + 1}/{repeat}): naive level-by-level, {dag.size} nodes")
            naive_runs.append(await _naive(server, naive_worker, dag, concurrency, timeout))
            log(f"{dag.name} ({index + 1}/{repeat}): harness, max_concurrency {concurrency}")
            harness_runs.append(await _harness(server, harness_worker, dag, concurrency, timeout))
            if harness_runs[-1].error or naive_runs[-1].error:
                break
        naive, harness = _median(naive_runs), _median(harness_runs)
        for side, worker in ((naive, naive_worker), (harness, harness_worker)):
            side.idle_rss_mb, side.peak_rss_mb = worker.idle_rss_mb, worker.peak_rss_mb()
        for side in (naive, harness):
            if side.timed is not None:
                side.histories = await chain_histories(
                    client, side.timed.workflow_id, side.timed.run_id
                )
                side.stats = analyze(side.histories, dag)
    log(f"{dag.name}: asyncio walker")
    walks = sorted([await walk(dag) for _ in range(repeat)])
    spread = f"wall min-max: harness {_range(harness_runs)}, naive {_range(naive_runs)}"
    return Comparison(
        dag, harness, naive, walks[(len(walks) - 1) // 2], concurrency, len(harness_runs), spread
    )


def _range(sides: list[Side]) -> str:
    walls = [side.client_s for side in sides if side.client_s is not None]
    return f"{min(walls):.3f}-{max(walls):.3f} s" if walls else "n/a"


async def _naive(
    server: Server, worker: WorkerProcess, dag: BenchDag, concurrency: int, timeout: float
) -> Side:
    side = Side("naive_temporal")
    probe = Probe(server, worker)
    request = naive_request(dag, concurrency)
    try:
        result, timed = await run_naive(
            server.client, worker.task_queue, request, timeout=timeout, label=dag.name
        )
    except BenchError as error:
        side.error = str(error)
        return side
    probe.fill(side)
    side.timed, side.client_s, side.workflow_s = timed, timed.seconds, result.wall_seconds
    return side


async def _harness(
    server: Server, worker: WorkerProcess, dag: BenchDag, concurrency: int, timeout: float
) -> Side:
    request = synthetic_request(dag.to_plan(), concurrency)
    side, result = await harness_side(server, worker, request, timeout, dag.name)
    if result is not None:
        _execute_span(side, result)
        side.result_kb = len(result.model_dump_json()) / 1024
    return side


async def harness_side(
    server: Server, worker: WorkerProcess, request: RunRequest, timeout: float, label: str
) -> tuple[Side, RunResult | None]:
    """One harness run of `request`, timed and probed: its side, and its result unless the
    run could not be measured (then the side says why)."""
    side = Side("harness")
    probe = Probe(server, worker)
    try:
        result, timed = await run_harness(
            server.client, worker.task_queue, request, timeout=timeout, label=label
        )
    except RunFailed as error:
        side.error, side.timed = str(error), error.timed
        probe.fill(side)
        return side, None
    probe.fill(side)
    if result.status is not RunPhase.SUCCEEDED:
        side.error = f"run ended {result.status.value}: {result.error}"
    side.timed, side.client_s, side.workflow_s = timed, timed.seconds, result.wall_seconds
    return side, result


def _execute_span(side: Side, result: RunResult) -> None:
    """First node scheduled -> last node finished, and the run's time before and after it."""
    starts = [node.started_at for node in result.nodes if node.started_at]
    ends = [node.finished_at for node in result.nodes if node.finished_at]
    if not starts or not ends:
        return
    side.execute_s = (max(ends) - min(starts)).total_seconds()
    side.pre_execute_s = (min(starts) - result.started_at).total_seconds()
    side.post_execute_s = (result.finished_at - max(ends)).total_seconds()
