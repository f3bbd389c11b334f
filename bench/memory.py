"""`python -m bench memory`: what memory saves on a sequence of related runs in one scope.

The same four goals run twice on one fresh dev server and in-process worker: once with memory
(each run's episode is there for the next) and once with `--no-memory` (the baseline). Per run:
tool calls, replans, tokens and wall time, side by side. The offline provider plans, so the
figures show the orchestration's saving (lookups not made, replans not needed), not a model's.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path

from temporalio.client import Client

from activities.llm import ProviderRegistry, ScriptedProvider
from bench.env import BenchError, dev_server_client, log
from bench.report import Measurement, measure
from durable_harness._client.run_results import result_of
from harness.engine.run import MemoryOptions, RunPhase, RunRequest, RunResult
from memory.sqlite_store import SqliteMemoryStore
from worker.app import build_worker
from workflows import AgentRunWorkflow

GOALS = (
    "Compare Paris, Atlantis and Tokyo",
    "Compare Rome, Atlantis and Vienna",
    "Compare Lisbon, Atlantis and Oslo",
    "Compare Oslo, Madrid and Atlantis",
)
"""Atlantis and Oslo are not in the cities data: the first run to meet each learns it."""


async def run() -> list[Measurement]:
    async with dev_server_client() as client:
        with tempfile.TemporaryDirectory(prefix="bench-memory-") as directory:
            with_memory = await _sequence(client, Path(directory), remember=True)
            without = await _sequence(client, Path(directory), remember=False)
    rows: list[Measurement] = []
    for index, (on, off) in enumerate(zip(with_memory, without, strict=True), 1):
        name = f"memory.run{index}"
        note = GOALS[index - 1]
        for metric, unit, value, baseline in (
            ("tool_calls", "calls", on.counts.tool_calls, off.counts.tool_calls),
            ("replans", "replans", on.counts.replans, off.counts.replans),
            ("tokens", "tokens", on.usage.total_tokens, off.usage.total_tokens),
            ("wall_s", "s", on.wall_seconds, off.wall_seconds),
        ):
            rows.append(
                measure(
                    name,
                    f"with_memory.{metric}",
                    value,
                    unit,
                    baseline=baseline,
                    vs=f"no_memory.{metric}",
                    note=note if metric == "tool_calls" else None,
                )
            )
    for label, results in (("with_memory", with_memory), ("no_memory", without)):
        log(f"{label}: " + ", ".join(f"{r.status.value}/{r.attempts}" for r in results))
    return rows


async def _sequence(client: Client, directory: Path, *, remember: bool) -> list[RunResult]:
    """The goals one after another in one scope, with a fresh store."""
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    store = SqliteMemoryStore(directory / f"memory-{queue}.db")
    results = []
    try:
        async with build_worker(
            client, queue, ProviderRegistry.always(ScriptedProvider()), memory=store
        ):
            for goal in GOALS:
                request = RunRequest(goal=goal, memory=MemoryOptions(enabled=remember))
                started = time.perf_counter()
                handle = await client.start_workflow(
                    AgentRunWorkflow.run, request, id=f"bench-{uuid.uuid4().hex[:10]}",
                    task_queue=queue,
                )  # fmt: skip
                result = await result_of(client, handle)
                if result.status is not RunPhase.SUCCEEDED:
                    raise BenchError(f"{goal!r} ended {result.status.value}: {result.error}")
                took = time.perf_counter() - started
                label = "memory" if remember else "no memory"
                log(f"{label}: {goal!r} {result.attempts} attempt(s), {took:.2f} s")
                results.append(result)
    finally:
        store.close()
    return results
