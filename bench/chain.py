"""`python -m bench chain N`: N zero-latency steps one after another, then the final node."""

from __future__ import annotations

from bench import plans
from bench.dagrun import compare
from bench.report import Measurement
from bench.rows import (
    history_rows,
    overhead_rows,
    repeats,
    resource_rows,
    wall_rows,
)

DEFAULT_STEPS = 100
TARGET_RATIO = 1.1  # overhead per step, a multiple of the baseline's (issue 39; 1.2 in issue 19)


async def run(steps: int, repeat: int = 1) -> list[Measurement]:
    bench = f"chain{steps}"
    cmp = await compare(plans.chain(steps), repeat=repeat)
    return [
        repeats(bench, cmp),
        *wall_rows(bench, cmp),
        *overhead_rows(bench, cmp, per="step", target_ratio=TARGET_RATIO),
        *history_rows(bench, cmp),
        *resource_rows(bench, cmp),
    ]
