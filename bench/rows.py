"""The measurements every DAG bench prints, from a `Comparison` (see bench.dagrun)."""

from __future__ import annotations

from dataclasses import replace

from bench.dagrun import Comparison
from bench.history import HistoryStats
from bench.report import Measurement, measure


def repeats(bench: str, cmp: Comparison) -> Measurement:
    return measure(
        bench,
        "repeats",
        cmp.repeat,
        "runs",
        note=f"figures from the run with the median wall time; {cmp.spread}"
        if cmp.repeat > 1
        else None,
    )


def wall_rows(bench: str, cmp: Comparison, *, target: float | None = None) -> list[Measurement]:
    """Wall times against the critical path (when it is not 0) and the baselines (seconds)."""
    cp = cmp.dag.critical_path_ms() / 1000
    h, n = cmp.harness, cmp.naive
    goal = f"<= {target:g}x critical path" if target else None
    met = None if target is None or h.client_s is None else h.client_s <= target * cp

    def vs_cp(
        metric: str, value: float | None, target: str | None = None, note: str | None = None
    ) -> Measurement:
        if not cp:
            return measure(bench, metric, value, "s", note=note)
        return measure(
            bench, metric, value, "s", baseline=cp, vs="critical_path", target=target, note=note
        )

    return [
        measure(bench, "critical_path_s", cp, "s"),
        replace(vs_cp("harness.wall_s", h.client_s, target=goal, note=h.error), met=met),
        measure(
            bench,
            "harness.wall_s",
            h.client_s,
            "s",
            baseline=n.client_s,
            vs="naive_temporal.wall_s",
        ),
        measure(
            bench,
            "harness.wall_s",
            h.client_s,
            "s",
            baseline=cmp.walker_s,
            vs="asyncio_walker.wall_s",
        ),
        vs_cp("harness.workflow_wall_s", h.workflow_s),
        vs_cp("harness.execute_span_s", h.execute_s),
        measure(bench, "harness.before_execute_ms", _ms(h.pre_execute_s), "ms"),
        measure(bench, "harness.after_execute_ms", _ms(h.post_execute_s), "ms"),
        vs_cp("naive_temporal.wall_s", n.client_s, note=n.error),
        vs_cp("naive_temporal.workflow_wall_s", n.workflow_s),
        vs_cp("asyncio_walker.wall_s", cmp.walker_s),
    ]


def overhead_rows(
    bench: str, cmp: Comparison, *, per: str = "node", target_ratio: float | None = None
) -> list[Measurement]:
    """(wall - critical path) / nodes for the harness, the naive workflow and the walker;
    `target_ratio`: the most the harness's may be, as a multiple of the naive workflow's."""
    cp, nodes = cmp.dag.critical_path_ms() / 1000, cmp.dag.size
    h, n = cmp.harness, cmp.naive

    def per_node(seconds: float | None) -> float | None:
        return None if seconds is None else (seconds - cp) * 1000 / nodes

    harness, naive = per_node(h.client_s), per_node(n.client_s)
    walker = per_node(cmp.walker_s)
    rows = [
        measure(
            bench,
            f"harness.overhead_per_{per}_ms",
            harness,
            "ms",
            baseline=naive,
            vs=f"naive_temporal.overhead_per_{per}_ms",
            target=f"ratio <= {target_ratio:g}" if target_ratio else None,
            met=None
            if target_ratio is None or harness is None or naive is None
            else harness <= target_ratio * naive,
        ),
        measure(
            bench,
            f"harness.overhead_per_{per}_ms",
            harness,
            "ms",
            baseline=walker,
            vs=f"asyncio_walker.overhead_per_{per}_ms",
        ),
        measure(
            bench,
            f"harness.execute_overhead_per_{per}_ms",
            per_node(h.execute_s),
            "ms",
            baseline=per_node(n.workflow_s),
            vs=f"naive_temporal.workflow_overhead_per_{per}_ms",
            note="execute span (first node scheduled -> last node done) vs the naive "
            "workflow's own wall time",
        ),
        measure(bench, f"naive_temporal.overhead_per_{per}_ms", naive, "ms"),
        measure(bench, f"asyncio_walker.overhead_per_{per}_ms", walker, "ms"),
    ]
    return rows


_STAT_ROWS = (  # metric, HistoryStats field, unit
    ("workflow_tasks", "workflow_tasks", "tasks"),
    ("timed_out_workflow_tasks", "timed_out_workflow_tasks", "tasks"),
    ("completions_per_task", "completions_per_task", "acts"),
    ("max_schedules_per_task", "max_schedules_per_task", "acts"),
    ("wft_work_ms", "wft_work_ms", "ms"),
    ("wft_work_p95_ms", "wft_work_p95_ms", "ms"),
    ("wft_work_max_ms", "wft_work_max_ms", "ms"),
    ("wft_queue_ms", "wft_queue_ms", "ms"),
    ("activity_pickup_ms", "pickup_ms", "ms"),
    ("activity_run_overhead_ms", "run_overhead_ms", "ms"),
    ("dispatch_ms", "dispatch_ms", "ms"),
    ("dispatch_max_ms", "dispatch_max_ms", "ms"),
)


def _stat(stats: HistoryStats | None, name: str, per: int = 1) -> float | None:
    value = getattr(stats, name) if stats is not None else None
    return None if value is None else float(value) / per


def history_rows(
    bench: str, cmp: Comparison, *, events_target: float | None = None
) -> list[Measurement]:
    """History size and shape, and where the time between activities goes (see bench.history)."""
    h, n, nodes = cmp.harness.stats, cmp.naive.stats, cmp.dag.size

    def pair(metric: str, unit: str, name: str, per: int = 1) -> Measurement:
        return measure(
            bench,
            f"harness.{metric}",
            _stat(h, name, per),
            unit,
            baseline=_stat(n, name, per),
            vs=f"naive_temporal.{metric}",
        )

    failed = cmp.harness.error is not None  # a failed run's history meets no target
    per_node = None if failed else _stat(h, "events", nodes)
    max_run = None if failed else _stat(h, "max_run_events")
    events = pair("events_per_node", "events", "events", nodes)
    if events_target is not None:
        met = None if per_node is None else per_node <= events_target
        events = replace(events, target=f"<= {events_target:g}", met=met)
    longest = pair("max_run_events", "events", "max_run_events")
    longest = replace(longest, target="<= 10240", met=None if max_run is None else max_run <= 10240)
    failed_tasks = pair("failed_workflow_tasks", "tasks", "failed_workflow_tasks")
    causes = " | ".join(
        f"{side}: {stats.failure_causes}"
        for side, stats in (("harness", h), ("naive", n))
        if stats is not None and stats.failure_causes
    )
    return [
        events,
        longest,
        replace(failed_tasks, note=causes or None),
        pair("runs_in_chain", "runs", "runs"),
        measure(
            bench,
            "harness.history_kib_per_node",
            _stat(h, "bytes", nodes * 1024),
            "KiB",
            baseline=_stat(n, "bytes", nodes * 1024),
            vs="naive_temporal.history_kib_per_node",
        ),
        *(pair(metric, unit, name) for metric, name, unit in _STAT_ROWS),
    ]


def resource_rows(bench: str, cmp: Comparison) -> list[Measurement]:
    h, n, nodes = cmp.harness, cmp.naive, cmp.dag.size

    def per_node_ms(seconds: float | None) -> float | None:
        return None if seconds is None else seconds * 1000 / nodes

    return [
        measure(
            bench,
            "harness.worker_peak_rss_mb",
            h.peak_rss_mb,
            "MiB",
            baseline=n.peak_rss_mb,
            vs="naive_temporal.worker_peak_rss_mb",
            note="VmHWM of the `python -m worker` subprocess (idle after start: "
            f"{_fmt(h.idle_rss_mb)} MiB; naive worker idle {_fmt(n.idle_rss_mb)} MiB)",
        ),
        measure(
            bench,
            "harness.worker_cpu_ms_per_node",
            per_node_ms(h.worker_cpu_s),
            "ms",
            baseline=per_node_ms(n.worker_cpu_s),
            vs="naive_temporal.worker_cpu_ms_per_node",
        ),
        measure(
            bench,
            "harness.server_cpu_ms_per_node",
            per_node_ms(h.server_cpu_s),
            "ms",
            baseline=per_node_ms(n.server_cpu_s),
            vs="naive_temporal.server_cpu_ms_per_node",
        ),
        *(
            measure(
                bench,
                f"harness.worker_{kind}_cpu_ms_per_node",
                per_node_ms(h.thread_cpu_s.get(kind)),
                "ms",
                baseline=per_node_ms(n.thread_cpu_s.get(kind)),
                vs=f"naive_temporal.worker_{kind}_cpu_ms_per_node",
                note=_THREAD_NOTES[kind],
            )
            for kind in _THREAD_NOTES
        ),
        measure(bench, "harness.result_kb", h.result_kb, "KiB"),
    ]


_THREAD_NOTES = {
    "loop": "worker main thread: asyncio loop, activity code, SDK's Python glue",
    "core": "worker tokio threads: the SDK's Rust core (gRPC, protobuf, state machines)",
    "workflow": "other worker threads: workflow activations (sandboxed workflow code)",
}


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _fmt(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}"
