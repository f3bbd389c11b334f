"""`python -m bench skew`: the skewed DAG of issue 7 against its critical path and the baselines."""

from __future__ import annotations

from bench import plans
from bench.dagrun import compare
from bench.report import Measurement
from bench.rows import history_rows, repeats, resource_rows, wall_rows

BENCH = "skew"
TARGET = 1.05  # wall time <= 1.05 x critical path (issue 19; 1.10 in issue 7)


async def run(repeat: int = 1) -> list[Measurement]:
    cmp = await compare(plans.skew(), repeat=repeat)
    return [
        repeats(BENCH, cmp),
        *wall_rows(BENCH, cmp, target=TARGET),
        *history_rows(BENCH, cmp),
        *resource_rows(BENCH, cmp),
    ]
