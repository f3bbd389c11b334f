"""`python -m bench runs M`: M concurrent cities runs (scripted provider) on one worker.

Baselines: M concurrent naive workflows, and M concurrent asyncio walkers, over the same
activities as one harness run (catalog -> plan -> the plan's nodes -> check -> judge, with each
node's measured tool latency), so the difference is the harness's orchestration.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bench.drive import run_harness, run_naive
from bench.env import HARNESS_WORKER, NAIVE_WORKER, BenchError, dev_server, log, worker_process
from bench.naive import naive_request
from bench.plans import BenchDag, mirror
from bench.report import Measurement, measure
from bench.walker import walk
from harness.engine.run import RunPhase, RunRequest

GOAL = "Compare Paris, Tokyo and New York"
TIMEOUT_S = 300.0
DEFAULT_RUNS = 20


@dataclass(frozen=True)
class Batch:
    """M concurrent runs: total wall and each run's latency."""

    wall_s: float
    latencies: list[float]
    succeeded: int
    peak_rss_mb: float | None = None
    cpu_s: float | None = None

    @property
    def per_second(self) -> float:
        return len(self.latencies) / self.wall_s

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


async def _batch(count: int, one: Callable[[int], Awaitable[tuple[float, bool]]]) -> Batch:
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(one(index) for index in range(count)))
    wall = time.perf_counter() - started
    return Batch(wall, [seconds for seconds, _ in outcomes], sum(ok for _, ok in outcomes))


async def run(count: int) -> list[Measurement]:
    bench = f"runs{count}"
    request = RunRequest(goal=GOAL)
    async with dev_server() as server:
        client = server.client
        async with worker_process(server, HARNESS_WORKER, "runs") as worker:
            queue = worker.task_queue
            warm, _ = await run_harness(client, queue, request, timeout=60, label="warmup")
            if warm.status is not RunPhase.SUCCEEDED or warm.plan is None:
                raise BenchError(f"the warm-up cities run ended {warm.status.value}: {warm.error}")
            latency = {node.id: round(node.tool_latency_ms or 0) for node in warm.nodes}
            shape = mirror(warm.plan, latency)

            async def one_harness(index: int) -> tuple[float, bool]:
                result, timed = await run_harness(
                    client, queue, request, timeout=TIMEOUT_S, label=f"runs{index}"
                )
                return timed.seconds, result.status is RunPhase.SUCCEEDED

            log(f"{bench}: {count} concurrent harness runs")
            cpu = worker.cpu_seconds()
            harness = await _batch(count, one_harness)
            harness = _with_resources(harness, worker.peak_rss_mb(), cpu, worker.cpu_seconds())
        async with worker_process(server, NAIVE_WORKER, "runs-naive") as worker:
            queue = worker.task_queue
            await run_naive(client, queue, naive_request(shape), timeout=60, label="warmup")

            async def one_naive(index: int) -> tuple[float, bool]:
                _, timed = await run_naive(
                    client, queue, naive_request(shape), timeout=TIMEOUT_S, label=f"runs{index}"
                )
                return timed.seconds, True

            log(f"{bench}: {count} concurrent naive runs of the same {shape.size} activities")
            cpu = worker.cpu_seconds()
            naive = await _batch(count, one_naive)
            naive = _with_resources(naive, worker.peak_rss_mb(), cpu, worker.cpu_seconds())
    walker = await _batch(count, lambda _: _walk_ok(shape))
    return _rows(bench, count, harness, naive, walker, shape)


async def _walk_ok(shape: BenchDag) -> tuple[float, bool]:
    return await walk(shape), True


def _with_resources(
    batch: Batch, peak: float | None, before: float | None, after: float | None
) -> Batch:
    cpu = None if before is None or after is None else after - before
    return Batch(batch.wall_s, batch.latencies, batch.succeeded, peak, cpu)


def _rows(
    bench: str, count: int, harness: Batch, naive: Batch, walker: Batch, shape: BenchDag
) -> list[Measurement]:
    def cpu_per_run(batch: Batch) -> float | None:
        return None if batch.cpu_s is None else batch.cpu_s * 1000 / count

    return [
        measure(bench, "harness.succeeded", harness.succeeded, "runs", baseline=count, vs="runs"),
        measure(
            bench,
            "harness.runs_per_s",
            harness.per_second,
            "runs/s",
            baseline=naive.per_second,
            vs="naive_temporal.runs_per_s",
            note=f"naive and walker run the same {shape.size} activities and tool latencies",
        ),
        measure(
            bench,
            "harness.runs_per_s",
            harness.per_second,
            "runs/s",
            baseline=walker.per_second,
            vs="asyncio_walker.runs_per_s",
        ),
        *(
            measure(
                bench,
                f"harness.{name}_s",
                harness.percentile(q),
                "s",
                baseline=naive.percentile(q),
                vs=f"naive_temporal.{name}_s",
            )
            for name, q in (("p50", 0.5), ("p95", 0.95))
        ),
        measure(
            bench,
            "harness.batch_wall_s",
            harness.wall_s,
            "s",
            baseline=naive.wall_s,
            vs="naive_temporal.batch_wall_s",
        ),
        measure(bench, "asyncio_walker.p95_s", walker.percentile(0.95), "s"),
        measure(
            bench,
            "harness.worker_peak_rss_mb",
            harness.peak_rss_mb,
            "MiB",
            baseline=naive.peak_rss_mb,
            vs="naive_temporal.worker_peak_rss_mb",
        ),
        measure(
            bench,
            "harness.worker_cpu_ms_per_run",
            cpu_per_run(harness),
            "ms",
            baseline=cpu_per_run(naive),
            vs="naive_temporal.worker_cpu_ms_per_run",
        ),
    ]
