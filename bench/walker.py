"""The level-synchronous asyncio baseline: gather each level's sleeps, then the next level."""

from __future__ import annotations

import asyncio
import time

from bench.plans import BenchDag


async def walk(dag: BenchDag) -> float:
    """Seconds to walk the DAG level by level in this process."""
    started = time.perf_counter()
    for level in dag.levels():
        await asyncio.gather(*(asyncio.sleep(node.ms / 1000) for node in level))
    return time.perf_counter() - started
