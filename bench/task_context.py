"""`python -m bench task-context [N]`: how fast a task with N ledger records (half facts, half
evidence; 2,000 by default) answers `harness context`, beside a task with none.

Both tasks live on the same fresh dev server and the same in-process worker; the big one has
continued as new on its way there. Measured: the context query's latency (median of 20), and
the whole `harness context TASK --json` command's wall time (median of 5, Python's start
included), each with the empty task's as the baseline.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from temporalio.client import Client

from activities.llm import ProviderRegistry, ScriptedProvider
from bench.env import BenchError, dev_server_client, log
from bench.report import Measurement, measure
from durable_harness._client import tasks
from harness.governance.task_commands import RecordEvidence, RecordFact, TaskCommand, TaskOperation
from harness.governance.task_graph import CreateTask, GraphCommand
from harness.governance.work import EvidenceKind
from worker.app import build_worker

DEFAULT_RECORDS = 2000
IN_FLIGHT = 8
"""Updates sent at once: the server admits few in-flight updates per workflow."""
QUERIES = 20
COMMANDS = 5
TARGET_S = 1.0
HARNESS = Path(sys.executable).with_name("harness")


async def run(records: int = DEFAULT_RECORDS) -> list[Measurement]:
    async with dev_server_client() as client:
        queue = f"bench-{uuid.uuid4().hex[:8]}"
        async with build_worker(client, queue, ProviderRegistry.always(ScriptedProvider())):
            scope = "bench"
            empty = await _create(client, queue, scope, "empty")
            big = await _create(client, queue, scope, "big")
            log(f"writing {records} records to {big}")
            await _fill(client, scope, big, records)
            query_s = await _query_median(client, scope, big)
            query_baseline_s = await _query_median(client, scope, empty)
            address = client.service_client.config.target_host
            # the worker shares this event loop: the command runs in a thread, never blocking it
            command_s = await asyncio.to_thread(_command_median, address, scope, big)
            command_baseline_s = await asyncio.to_thread(_command_median, address, scope, empty)
    name = f"task-context{records}"
    return [
        measure(
            name,
            "harness.context_query_s",
            query_s,
            "s",
            baseline=query_baseline_s,
            vs="empty_task.context_query_s",
            target=f"< {TARGET_S} s",
            met=query_s < TARGET_S,
        ),
        measure(
            name,
            "harness.context_command_s",
            command_s,
            "s",
            baseline=command_baseline_s,
            vs="empty_task.context_command_s",
            note="`harness context TASK --json`, Python's start included",
        ),
    ]


async def _create(client: Client, queue: str, scope: str, title: str) -> str:
    command = GraphCommand(scope=scope, actor="human:bench", operation=CreateTask(title=title))
    receipt = await tasks.scope_command(client, queue, command)
    if not receipt.accepted or receipt.id is None:
        raise BenchError(f"cannot create a task: {receipt.reason}")
    return receipt.id


async def _fill(client: Client, scope: str, task_id: str, records: int) -> None:
    operations: list[TaskOperation] = []
    for n in range(records // 2):
        operations.append(RecordFact(statement=f"fact {n}", source="bench", confidence=0.5))
        operations.append(
            RecordEvidence(kind=EvidenceKind.TEST, summary=f"check {n}", location=f"bench/{n}")
        )
    for start in range(0, len(operations), IN_FLIGHT):
        batch = operations[start : start + IN_FLIGHT]
        await asyncio.gather(
            *(
                tasks.task_command(
                    client,
                    scope,
                    TaskCommand(
                        task_id=task_id,
                        actor="agent:bench",
                        operation=operation,
                        idempotency_key=f"k{start + offset}",
                    ),
                )
                for offset, operation in enumerate(batch)
            )
        )


async def _query_median(client: Client, scope: str, task_id: str) -> float:
    seconds = []
    for _ in range(QUERIES):
        started = time.perf_counter()
        await tasks.context(client, scope, task_id)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def _command_median(address: str, scope: str, task_id: str) -> float:
    env = {**os.environ, "TEMPORAL_ADDRESS": address}
    seconds = []
    for _ in range(COMMANDS):
        started = time.perf_counter()
        done = subprocess.run(
            [str(HARNESS), "context", task_id, "--scope", scope, "--json"],
            env=env,
            capture_output=True,
            timeout=60,
        )
        seconds.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise BenchError(f"harness context failed: {done.stderr.decode().strip()}")
    return statistics.median(seconds)
