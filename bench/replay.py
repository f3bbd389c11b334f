"""`python -m bench replay`: time to replay a 1,000-node run's history (every run of its chain)."""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from bench.dagrun import Comparison
from bench.env import BenchError, log
from bench.fanout import measure_fanout
from bench.naive import NaiveLevelsWorkflow
from bench.report import Measurement, measure
from infra.converter import DATA_CONVERTER
from infra.plugin import PASSTHROUGH_MODULES, HarnessPlugin

NODES = 1000
TARGET_RATIO = 1.2  # replay time, as a multiple of the minimal baseline's (issue 19)


async def _each(replayer: Replayer, histories: Sequence[WorkflowHistory]) -> list[float]:
    """Every history in a call of its own (the warm-up): wall seconds of each."""
    seconds = []
    for history in histories:
        started = time.perf_counter()
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        seconds.append(time.perf_counter() - started)
        if replayed.replay_failure is not None:
            raise BenchError(f"{history.run_id} did not replay: {replayed.replay_failure}")
    return seconds


async def _replay(replayer: Replayer, histories: Sequence[WorkflowHistory]) -> Replayed:
    """Every history of the run in one pass, as one worker replays them (a Replayer call builds
    a worker, validating each workflow it knows: 50-70 ms for the harness's eight): wall
    seconds and the process's CPU."""

    async def each() -> AsyncIterator[WorkflowHistory]:
        for history in histories:
            yield history

    cpu, started = time.process_time(), time.perf_counter()
    results = await replayer.replay_workflows(each(), raise_on_replay_failure=False)
    seconds = time.perf_counter() - started
    for run_id, failure in results.replay_failures.items():
        raise BenchError(f"{run_id} did not replay: {failure}")
    return Replayed(seconds, time.process_time() - cpu)


@dataclass(frozen=True)
class Replayed:
    total: float
    cpu_s: float


def _median(runs: list[Replayed]) -> Replayed:
    return sorted(runs, key=lambda one: one.total)[(len(runs) - 1) // 2]


async def run(
    comparison: Comparison | None = None,
    *,
    nodes: int = NODES,
    profile: bool = False,
    repeat: int = 1,
) -> list[Measurement]:
    """Replay the harness's (and the naive workflow's) history of a `nodes`-node fan-out.

    Each side replays its histories once untimed (the first replay in a process also pays for
    what the process had not loaded yet: it went to whichever side came first), then the two
    take turns `repeat` times; the figures are the medians. With `profile`, the harness's timed
    replays run under cProfile in the workflow thread, and the functions with the most own time
    go to stderr: the workflow code's CPU, without the server.
    """
    if comparison is None:
        _, comparison = await measure_fanout(nodes)
    bench = f"replay{comparison.dag.size - 1}"
    harness, naive = comparison.harness.histories, comparison.naive.histories
    if not harness:
        raise BenchError(f"no harness history to replay: {comparison.harness.error}")
    log(f"replaying {len(harness)} harness run(s) and {len(naive)} naive run(s), {repeat} times")
    profiler = cProfile.Profile() if profile else None
    executor = ThreadPoolExecutor(1)
    harness_replayer = Replayer(
        workflows=[], plugins=[HarnessPlugin()], workflow_task_executor=executor
    )
    naive_replayer = Replayer(  # sandboxed as its worker runs it (bench.naive_worker's client)
        workflows=[NaiveLevelsWorkflow],
        data_converter=DATA_CONVERTER,
        workflow_runner=SandboxedWorkflowRunner(
            restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES)
        ),
    )
    harness_runs: list[Replayed] = []
    naive_runs: list[Replayed] = []
    try:
        per_run = await _each(harness_replayer, harness)  # warm-up, untimed
        if naive:
            await _each(naive_replayer, naive)
        if profiler is not None:
            executor.submit(profiler.enable).result()
        for _ in range(max(repeat, 1)):
            harness_runs.append(await _replay(harness_replayer, harness))
            if naive:
                naive_runs.append(await _replay(naive_replayer, naive))
        if profiler is not None:
            executor.submit(profiler.disable).result()
            _print_profile(profiler)
    finally:
        executor.shutdown()
    timed = _median(harness_runs)
    naive_s = _median(naive_runs).total if naive_runs else None
    naive_cpu = _median(naive_runs).cpu_s if naive_runs else None
    at_target_size = comparison.dag.size - 1 == NODES  # the target is for 1,000 nodes
    events = sum(len(history.events) for history in harness)
    walls = [one.total for one in harness_runs]
    naive_walls = [one.total for one in naive_runs]
    spread = f"harness {min(walls):.3f}-{max(walls):.3f} s" + (
        f", naive {min(naive_walls):.3f}-{max(naive_walls):.3f} s" if naive_walls else ""
    )
    return [
        measure(
            bench,
            "harness.replay_s",
            timed.total,
            "s",
            baseline=naive_s,
            vs="naive_temporal.replay_s",
            target=f"ratio <= {TARGET_RATIO:g}" if at_target_size else None,
            met=timed.total <= TARGET_RATIO * naive_s if at_target_size and naive_s else None,
            note=comparison.harness.error
            or f"median of {len(harness_runs)} after a warm-up replay each; {spread}",
        ),
        measure(
            bench,
            "harness.replay_cpu_s",
            timed.cpu_s,
            "s",
            baseline=naive_cpu,
            vs="naive_temporal.replay_cpu_s",
            note="the bench process's CPU during the median replay (all threads)",
        ),
        measure(
            bench,
            "harness.replay_max_run_s",
            max(per_run),
            "s",
            note="the longest run of the warm-up (one Replayer call per run)",
        ),
        measure(bench, "harness.replay_runs", len(harness), "runs"),
        measure(bench, "harness.replay_events", events, "events"),
        measure(bench, "harness.replay_us_per_event", timed.total * 1e6 / events, "us"),
    ]


def _print_profile(profiler: cProfile.Profile, top: int = 25) -> None:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs().sort_stats(pstats.SortKey.TIME).print_stats(top)
    stats.sort_stats(pstats.SortKey.CUMULATIVE).print_stats(top)
    print(out.getvalue(), file=sys.stderr, flush=True)
