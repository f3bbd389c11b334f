"""`python -m bench big [N]`: the documented plan maximum (N = MAX_PLAN_NODES = 20,000 nodes: a
fan-in of N - 1 zero-latency leaves and the final node) runs to the end, with no failed workflow
task. Its baseline is the same harness on a plan a tenth of the size (2,000 nodes), on the
same server and worker, so the ratio says how the cost per node grows with the plan. (The
minimal baseline cannot run it: one history of 20,000 activities is about 60,000 events, past
Temporal's 51,200.) It takes minutes: not in CI, not in `all`.
"""

from __future__ import annotations

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


def _rows(bench: str, baseline: BigRun, big: BigRun) -> list[Measurement]:
    vs = f"big{baseline.nodes}"
    stats, base = big.stats, baseline.stats

    def per_node_ms(run: BigRun) -> float | None:
        return None if run.seconds is None else run.seconds * 1000 / run.nodes

    def stat(of: HistoryStats | None, name: str) -> float | None:
        value = None if of is None else getattr(of, name)
        return None if value is None else float(value)

    failed = stat(stats, "failed_workflow_tasks")
    causes = stats.failure_causes if stats is not None and stats.failure_causes else None
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
        measure(
            bench,
            "harness.failed_workflow_tasks",
            failed,
            "tasks",
            baseline=stat(base, "failed_workflow_tasks"),
            vs=vs,
            target="0",
            met=None if failed is None else failed == 0,
            note=causes,
        ),
        measure(
            bench,
            "harness.events",
            stat(stats, "events"),
            "events",
            baseline=stat(base, "events"),
            vs=vs,
        ),
        measure(
            bench,
            "harness.max_run_events",
            stat(stats, "max_run_events"),
            "events",
            baseline=stat(base, "max_run_events"),
            vs=vs,
            target="<= 10240",
            met=None if stats is None else stats.max_run_events <= 10240,
        ),
        measure(
            bench,
            "harness.runs_in_chain",
            stat(stats, "runs"),
            "runs",
            baseline=stat(base, "runs"),
            vs=vs,
        ),
        measure(
            bench,
            "harness.workflow_tasks",
            stat(stats, "workflow_tasks"),
            "tasks",
            baseline=stat(base, "workflow_tasks"),
            vs=vs,
        ),
        measure(
            bench,
            "harness.wft_work_max_ms",
            stat(stats, "wft_work_max_ms"),
            "ms",
            baseline=stat(base, "wft_work_max_ms"),
            vs=vs,
            note="the longest workflow task; the SDK fails an activation that runs 2 s",
        ),
    ]
