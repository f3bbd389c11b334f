"""Runs that remember: each run leaves an episode, whatever its ending, and the next run's
planner sees it (the offline provider plans around an entity an earlier run found missing)."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client

from durable_harness._client.run_results import result_of
from harness.core.errors import ErrorCode
from harness.engine.budget import BudgetLimits
from harness.engine.run import MemoryOptions, RunPhase, RunRequest
from harness.engine.trace import TraceKind
from harness.governance.task_commands import InvalidateFact, RecordFact
from harness.governance.task_graph import CreateTask
from harness.recall.memory_records import DEFAULT_DEPTH, SHALLOW_DEPTH, MemoryFilter
from memory.sqlite_store import SqliteMemoryStore
from tests.factories import collect, node, synthetic_plan
from tests.starter.test_tasks import graph_command, new_scope, task_command
from tests.support import execute_run, pending_wait, running_worker, start_run


def _store(tmp_path: Path) -> SqliteMemoryStore:
    return SqliteMemoryStore(tmp_path / "memory.db")


async def test_the_second_of_two_related_runs_skips_what_the_first_found_missing(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        first = await execute_run(
            client, task_queue, RunRequest(goal="Compare Paris, Atlantis and Tokyo")
        )
        second = await execute_run(
            client, task_queue, RunRequest(goal="Compare Rome, Atlantis and Vienna")
        )
    assert first.status is RunPhase.SUCCEEDED and first.attempts == 2
    assert second.status is RunPhase.SUCCEEDED
    assert second.attempts == 1 and second.counts.replans == 0
    assert not [n for n in second.nodes if "atlantis" in n.id]  # no failed lookup
    assert second.report is not None and "Atlantis" in second.report  # reported missing
    recalled = [e for e in second.trace if e.kind is TraceKind.MEMORY_RETRIEVE]
    assert recalled and recalled[0].data["remembered_missing"] == ["Atlantis"]
    included = recalled[0].data["included"]
    assert isinstance(included, list) and included
    assert any(f"episode-{first.run_id}" == m["id"] for m in included if isinstance(m, dict))


async def test_a_run_without_memory_neither_reads_nor_writes_it(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    off = MemoryOptions(enabled=False)
    async with running_worker(client, task_queue, memory=store):
        await execute_run(client, task_queue, RunRequest(goal="Compare Paris, Atlantis and Tokyo"))
        blind = await execute_run(
            client, task_queue, RunRequest(goal="Compare Rome, Atlantis and Vienna", memory=off)
        )
    assert blind.attempts == 2  # it looked Atlantis up again, and replanned
    assert not [e for e in blind.trace if e.kind is TraceKind.MEMORY_RETRIEVE]
    assert store.get(f"episode-{blind.run_id}") is None


async def test_an_episode_is_kept_for_a_succeeded_a_failed_and_a_cancelled_run(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    halting = synthetic_plan(
        node("stop", "fail", code=ErrorCode.POLICY_VIOLATION.value), collect("end", ["stop"])
    )
    async with running_worker(client, task_queue, memory=store):
        done = await execute_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
        failed = await execute_run(
            client, task_queue, RunRequest(goal="halt", scenario="synthetic", plan=halting)
        )
        asking = await start_run(client, task_queue, RunRequest(goal="Compare"))
        await pending_wait(asking, "question-1")  # the goal names no city: it asks
        await asking.cancel()
        cancelled = await result_of(client, asking)
    assert cancelled.status is RunPhase.CANCELLED
    for result in (done, failed, cancelled):
        record = store.get(f"episode-{result.run_id}")
        assert record is not None, result.status
        assert record.data["status"] == result.status.value
        assert record.scope == "default" and record.run_id == result.run_id
    halted = store.get(f"episode-{failed.run_id}")
    assert halted is not None and "POLICY_VIOLATION" in halted.text


async def test_an_episode_outlives_the_worker_that_wrote_it(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    """Workers are interchangeable: one writes, stops; a new one (a new store handle on the
    same file) reads it for the next run of the session."""
    async with running_worker(client, task_queue, memory=_store(tmp_path)):
        first = await execute_run(
            client,
            task_queue,
            RunRequest(goal="Compare Paris, Atlantis and Tokyo", session_id="s-1"),
        )
    async with running_worker(client, task_queue, memory=_store(tmp_path)):
        second = await execute_run(
            client,
            task_queue,
            RunRequest(goal="Compare Lisbon and Atlantis", session_id="s-1"),
        )
    recalled = next(e for e in second.trace if e.kind is TraceKind.MEMORY_RETRIEVE)
    included = recalled.data["included"]
    assert isinstance(included, list) and isinstance(included[0], dict)
    assert included[0]["id"] == f"episode-{first.run_id}"  # the session's, first
    assert second.attempts == 1
    assert [r.id for r in _store(tmp_path).select(MemoryFilter(session_id="s-1"))] == [
        f"episode-{second.run_id}",
        f"episode-{first.run_id}",
    ]


async def test_the_context_stays_within_its_budget_and_says_what_it_cut(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    tight = MemoryOptions(budget_chars=300)
    async with running_worker(client, task_queue, memory=store):
        result = await execute_run(
            client, task_queue, RunRequest(goal="Compare Paris, Rome and Vienna", memory=tight)
        )
    recalled = next(e for e in result.trace if e.kind is TraceKind.MEMORY_RETRIEVE)
    used, left_out = recalled.data["used_chars"], recalled.data["left_out"]
    assert isinstance(used, int) and used <= 300
    assert isinstance(left_out, list) and left_out  # the city facts did not all fit
    assert "left out at the budget" in (recalled.message or "")


async def test_under_budget_pressure_retrieval_goes_shallow_and_the_planner_uses_the_fallback(
    client: Client, task_queue: str
) -> None:
    """Attempt 1 makes 9 of 12 tool calls (pressure 0.75): the replan retrieves fewer memories
    and is planned by the fallback model; the run still succeeds on the reused results."""
    request = RunRequest(
        goal="Compare Paris, Atlantis and Tokyo", limits=BudgetLimits(max_tool_calls=12)
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    planners = [a.planned_by for a in result.attempt_history]
    assert planners == ["scripted:scripted-v1", "scripted:scripted-v1-fallback"]
    depths = [e.data["depth"] for e in result.trace if e.kind is TraceKind.MEMORY_RETRIEVE]
    assert depths == [DEFAULT_DEPTH, SHALLOW_DEPTH]


async def test_a_valid_fact_of_the_scopes_ledger_is_a_memory_and_an_invalidated_one_is_not(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        task = await graph_command(client, task_queue, scope, CreateTask(title="trip"))
        kept = await task_command(
            client,
            scope,
            task,
            RecordFact(statement="Vienna is where we meet", source="calendar", confidence=0.8),
        )
        dropped = await task_command(
            client,
            scope,
            task,
            RecordFact(statement="Vienna trip is cancelled", source="chat", confidence=0.4),
        )
        await task_command(
            client,
            scope,
            task,
            InvalidateFact(fact_id=dropped, reason="it was not"),
        )
        result = await execute_run(
            client, task_queue, RunRequest(goal="Compare Rome and Vienna", scope=scope)
        )
    recalled = next(e for e in result.trace if e.kind is TraceKind.MEMORY_RETRIEVE)
    included = recalled.data["included"]
    assert isinstance(included, list)
    ids = [m["id"] for m in included if isinstance(m, dict)]
    assert f"fact-{task}-{kept}" in ids and f"fact-{task}-{dropped}" not in ids
    fact = next(m for m in included if isinstance(m, dict) and m["id"] == f"fact-{task}-{kept}")
    assert "source calendar; confidence 0.80" in str(fact["text"])
