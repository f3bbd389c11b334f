"""`python -m bench fanout N`: N zero-latency nodes plus a final node; overhead per node."""

from __future__ import annotations

from bench import plans
from bench.dagrun import Comparison, compare
from bench.report import Measurement, measure
from bench.rows import (
    history_rows,
    overhead_rows,
    repeats,
    resource_rows,
    wall_rows,
)

EVENTS_TARGET = 3.5  # history events per node


def overhead_target(count: int, tool: str) -> float:
    """The harness's overhead per node, as a multiple of the minimal baseline's: 0.4 with cheap
    (local) leaves and 1.2 with regular activities (issue 19); 1.1 for 5,000 nodes (issue 39;
    1.3 in issue 19)."""
    if tool == "echo":
        return 0.4
    return 1.1 if count >= 5000 else 1.2


DEFAULT_NODES = 1000
TOOLS = ("delay", "echo")  # echo: the harness's leaves run as local activities


async def run(
    count: int, max_concurrency: int | None = None, repeat: int = 1, tool: str = "delay"
) -> list[Measurement]:
    measurements, _ = await measure_fanout(count, max_concurrency, repeat, tool)
    return measurements


async def measure_fanout(
    count: int, max_concurrency: int | None = None, repeat: int = 1, tool: str = "delay"
) -> tuple[list[Measurement], Comparison]:
    dag = plans.fanout(count, tool=tool)
    bench = dag.name
    cmp = await compare(dag, max_concurrency=max_concurrency, repeat=repeat)
    completed = cmp.harness.error is None
    rows = [
        measure(
            bench,
            "harness.completed",
            1.0 if completed else 0.0,
            "bool",
            target="completes",
            met=completed,
            note=cmp.harness.error,
        ),
        repeats(bench, cmp),
        measure(bench, "harness.max_concurrency", cmp.max_concurrency, "nodes"),
        *wall_rows(bench, cmp),
        *overhead_rows(bench, cmp, target_ratio=overhead_target(count, tool)),
        *history_rows(bench, cmp, events_target=EVENTS_TARGET),
        *resource_rows(bench, cmp),
    ]
    return rows, cmp
