"""A failing memory store costs a run its memory, never its ending (issue 32, F2).

Each test breaks a real store under a running worker (a SQLite file overwritten with junk, a
lock held by another connection, a store slower than a run waits for), runs, and shows that
the run ends in Temporal and in its RunResult as the same request without memory does, that
its trace says what memory could not do, and that its history replays."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.worker import Replayer

from durable_harness._client.history import trace_of, trace_table
from harness.core.errors import ErrorCode
from harness.engine.run import MemoryOptions, RunPhase, RunRequest, RunResult
from harness.engine.trace import TraceEvent, TraceKind
from infra.plugin import HarnessPlugin
from memory import MemoryStore
from memory.postgres_store import PostgresMemoryStore
from memory.sqlite_store import SqliteMemoryStore
from tests.factories import collect, node, synthetic_plan
from tests.memory.store_faults import corrupted, locked
from tests.postgres_server import server_binaries, stop_cluster, throwaway_cluster
from tests.support import execute_run, running_worker
from workflows.activity_calls.stores import MEMORY_PATIENCE

CITIES = RunRequest(goal="Compare Paris and Tokyo")
REPLANNING = RunRequest(goal="Compare Paris, Atlantis and Tokyo")
"""Atlantis is not found: the run replans once, so it plans twice."""
HALTING = RunRequest(
    goal="halt",
    scenario="synthetic",
    plan=synthetic_plan(
        node("stop", "fail", code=ErrorCode.POLICY_VIOLATION.value), collect("end", ["stop"])
    ),
)
SLACK = timedelta(seconds=120)
"""What a loaded machine may add to MEMORY_PATIENCE between a call's start and the task that
sees it end: generous (15 s was passed under CI's load), and still far below the ten minutes the
slow store would take unbounded, so the assertion tells a bounded call from an unbounded one."""


def _without_memory(request: RunRequest) -> RunRequest:
    return request.model_copy(update={"memory": MemoryOptions(enabled=False)})


async def _ending(client: Client, result: RunResult) -> tuple[Any, ...]:
    """What a run's failing memory must not change: its Temporal status and its result."""
    described = await client.get_workflow_handle(result.run_id).describe()
    plan = result.plan.model_dump(mode="json") if result.plan else None
    nodes = [(n.id, n.tool, n.status) for n in result.nodes]
    passed = result.verdict.passed if result.verdict else None
    ending = (result.status, result.error, result.report, result.attempts, plan, nodes, passed)
    return described.status, *ending


async def _replays(client: Client, run_id: str) -> None:
    history = await client.get_workflow_handle(run_id).fetch_history()
    replayer = Replayer(workflows=[], plugins=[HarnessPlugin()])
    replay = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replay.replay_failure is None


def _events(result: RunResult, kind: TraceKind) -> list[TraceEvent]:
    return [event for event in result.trace if event.kind is kind]


async def _run_on_broken_store(
    client: Client,
    task_queue: str,
    store: MemoryStore,
    fault: AbstractContextManager[None],
    request: RunRequest,
) -> tuple[RunResult, RunResult]:
    """The request on a worker whose store is broken by `fault`, and the same request without
    memory on the same worker."""
    async with running_worker(client, task_queue, memory=store):
        with fault:
            broken = await execute_run(client, task_queue, request)
        blind = await execute_run(client, task_queue, _without_memory(request))
    return broken, blind


async def test_a_run_whose_store_is_corrupt_plans_without_memory_and_replays(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    fault = corrupted(tmp_path / "memory.db")
    broken, blind = await _run_on_broken_store(client, task_queue, store, fault, REPLANNING)

    assert broken.status is RunPhase.SUCCEEDED and broken.attempts == 2
    assert await _ending(client, broken) == await _ending(client, blind)
    [retrieval] = _events(broken, TraceKind.MEMORY_RETRIEVE)  # not tried again at the replan
    assert retrieval.status == "unavailable" and retrieval.message is not None
    assert retrieval.message.startswith("planning without memory for the rest of the run: ")
    assert "file is not a database" in retrieval.message and "\n" not in retrieval.message
    [unsaved] = _events(broken, TraceKind.MEMORY_RECORD)
    assert unsaved.status == "not_saved" and unsaved.message is not None
    assert f"episode-{broken.run_id} not saved" in unsaved.message
    await _replays(client, broken.run_id)


@pytest.mark.waits_out_timeouts
async def test_a_run_whose_store_is_locked_keeps_its_ending_and_replays(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    fault = locked(tmp_path / "memory.db")
    broken, blind = await _run_on_broken_store(client, task_queue, store, fault, CITIES)

    assert broken.status is RunPhase.SUCCEEDED
    assert await _ending(client, broken) == await _ending(client, blind)
    [retrieval] = _events(broken, TraceKind.MEMORY_RETRIEVE)
    assert retrieval.status == "full"  # reads go on under a write lock (WAL)
    [unsaved] = _events(broken, TraceKind.MEMORY_RECORD)
    assert unsaved.message is not None and "database is locked" in unsaved.message
    assert store.get(f"episode-{broken.run_id}") is None
    await _replays(client, broken.run_id)
    replayed = await trace_of(client, broken.run_id)  # what `harness trace` prints
    said = [line for line in trace_table(replayed.trace) if " memory.record " in line]
    assert len(said) == 1 and f"episode-{broken.run_id} not saved" in said[0]


@pytest.mark.waits_out_timeouts
async def test_a_failed_episode_write_leaves_a_failed_run_failed_as_it_was(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    store = SqliteMemoryStore(tmp_path / "memory.db")
    fault = locked(tmp_path / "memory.db")
    broken, blind = await _run_on_broken_store(client, task_queue, store, fault, HALTING)

    assert broken.status is RunPhase.FAILED_EXECUTION
    assert await _ending(client, broken) == await _ending(client, blind)
    described = await client.get_workflow_handle(broken.run_id).describe()
    assert described.status is WorkflowExecutionStatus.FAILED  # the run's own ending, as before
    [unsaved] = _events(broken, TraceKind.MEMORY_RECORD)
    assert unsaved.status == "not_saved"
    assert unsaved.message is not None and "database is locked" in unsaved.message
    await _replays(client, broken.run_id)


@pytest.mark.waits_out_timeouts
async def test_a_slow_store_costs_a_run_at_most_its_memory_bound(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    """A store that waits ten minutes for a lock: the episode write gives up at the bound."""
    path = tmp_path / "memory.db"
    store = SqliteMemoryStore(path, busy_seconds=600)
    broken, blind = await _run_on_broken_store(client, task_queue, store, locked(path), CITIES)

    assert broken.status is RunPhase.SUCCEEDED
    assert await _ending(client, broken) == await _ending(client, blind)
    [finish] = _events(broken, TraceKind.RUN_FINISH)
    [unsaved] = _events(broken, TraceKind.MEMORY_RECORD)
    assert unsaved.message is not None and "timed out" in unsaved.message
    assert unsaved.at - finish.at <= MEMORY_PATIENCE + SLACK
    await _replays(client, broken.run_id)


async def test_a_run_whose_postgres_store_was_stopped_plans_without_memory_and_replays(
    client: Client, task_queue: str
) -> None:
    """The worker opened the store; then the Postgres server was stopped under it."""
    if server_binaries() is None:
        pytest.skip("Postgres server binaries (initdb, pg_ctl) are not installed")
    with throwaway_cluster() as url:
        store = PostgresMemoryStore(url)
        stop_cluster(url)
        broken, blind = await _run_on_broken_store(client, task_queue, store, nullcontext(), CITIES)

    assert broken.status is RunPhase.SUCCEEDED
    assert await _ending(client, broken) == await _ending(client, blind)
    [retrieval] = _events(broken, TraceKind.MEMORY_RETRIEVE)
    assert retrieval.status == "unavailable" and retrieval.message is not None
    assert "cannot be opened" in retrieval.message and "\n" not in retrieval.message
    [unsaved] = _events(broken, TraceKind.MEMORY_RECORD)
    assert unsaved.message is not None and "cannot be opened" in unsaved.message
    await _replays(client, broken.run_id)


@contextmanager
def _table_locked(url: str) -> Iterator[None]:
    """Another session holds the memories table in ACCESS EXCLUSIVE mode: every read and write
    of the store waits, until Postgres's statement timeout (10 s) cancels it."""
    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE harness_memories IN ACCESS EXCLUSIVE MODE")
        yield
        holder.rollback()


@pytest.mark.waits_out_timeouts
async def test_a_slow_store_costs_a_runs_retrieval_at_most_its_memory_bound(
    client: Client, task_queue: str, postgres_database: str
) -> None:
    """Every statement waits for a lock until Postgres cancels it: retrieval gives up at the
    bound, and so does the episode write."""
    store = PostgresMemoryStore(postgres_database)
    fault = _table_locked(postgres_database)
    try:
        broken, blind = await _run_on_broken_store(client, task_queue, store, fault, CITIES)
    finally:
        store.close()

    assert broken.status is RunPhase.SUCCEEDED
    assert await _ending(client, broken) == await _ending(client, blind)
    [start] = _events(broken, TraceKind.RUN_START)
    [retrieval] = _events(broken, TraceKind.MEMORY_RETRIEVE)
    assert retrieval.status == "unavailable"
    assert retrieval.at - start.at <= MEMORY_PATIENCE + SLACK
    [finish] = _events(broken, TraceKind.RUN_FINISH)
    [unsaved] = _events(broken, TraceKind.MEMORY_RECORD)
    assert unsaved.at - finish.at <= MEMORY_PATIENCE + SLACK
    await _replays(client, broken.run_id)
