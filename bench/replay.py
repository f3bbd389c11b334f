"""`python -m bench replay`: time to replay a 1,000-node run's history (every run of its chain)."""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from bench.dagrun import Comparison
from bench.env import BenchError, log
from bench.fanout import measure_fanout
from bench.naive import NaiveLevelsWorkflow
from bench.report import Measurement, measure
from infra.converter import DATA_CONVERTER
from infra.plugin import HarnessPlugin

NODES = 1000
TARGET_RATIO = 1.2  # replay time, as a multiple of the minimal baseline's (issue 19)


async def _replay(replayer: Replayer, histories: Sequence[WorkflowHistory]) -> list[float]:
    seconds = []
    for history in histories:
        started = time.perf_counter()
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        seconds.append(time.perf_counter() - started)
        if replayed.replay_failure is not None:
            raise BenchError(f"{history.run_id} did not replay: {replayed.replay_failure}")
    return seconds


async def run(
    comparison: Comparison | None = None, *, nodes: int = NODES, profile: bool = False
) -> list[Measurement]:
    """Replay the harness's (and the naive workflow's) history of a `nodes`-node fan-out.

    With `profile`, the harness replay runs under cProfile in the workflow thread, and the
    functions with the most own time go to stderr: the workflow code's CPU, without the server.
    """
    if comparison is None:
        _, comparison = await measure_fanout(nodes)
    bench = f"replay{comparison.dag.size - 1}"
    harness, naive = comparison.harness.histories, comparison.naive.histories
    if not harness:
        raise BenchError(f"no harness history to replay: {comparison.harness.error}")
    log(f"replaying {len(harness)} harness run(s) and {len(naive)} naive run(s)")
    converter = DATA_CONVERTER
    profiler = cProfile.Profile() if profile else None
    executor = ThreadPoolExecutor(1, initializer=profiler.enable if profiler else None)
    try:
        harness_s = await _replay(
            Replayer(workflows=[], plugins=[HarnessPlugin()], workflow_task_executor=executor),
            harness,
        )
        if profiler is not None:
            executor.submit(profiler.disable).result()
            _print_profile(profiler)
    finally:
        executor.shutdown()
    naive_s = await _replay(
        Replayer(workflows=[NaiveLevelsWorkflow], data_converter=converter), naive
    )
    total, longest = sum(harness_s), max(harness_s)
    at_target_size = comparison.dag.size - 1 == NODES  # the target is for 1,000 nodes
    events = sum(len(history.events) for history in harness)
    return [
        measure(
            bench,
            "harness.replay_s",
            total,
            "s",
            baseline=sum(naive_s) if naive_s else None,
            vs="naive_temporal.replay_s",
            target=f"ratio <= {TARGET_RATIO:g}" if at_target_size else None,
            met=total <= TARGET_RATIO * sum(naive_s) if at_target_size and naive_s else None,
            note=comparison.harness.error,
        ),
        measure(bench, "harness.replay_max_run_s", longest, "s"),
        measure(bench, "harness.replay_runs", len(harness), "runs"),
        measure(bench, "harness.replay_events", events, "events"),
        measure(bench, "harness.replay_us_per_event", total * 1e6 / events, "us"),
    ]


def _print_profile(profiler: cProfile.Profile, top: int = 25) -> None:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs().sort_stats(pstats.SortKey.TIME).print_stats(top)
    stats.sort_stats(pstats.SortKey.CUMULATIVE).print_stats(top)
    print(out.getvalue(), file=sys.stderr, flush=True)
