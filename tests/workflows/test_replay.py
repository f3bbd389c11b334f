"""Workflow code changes must keep recorded histories replaying without nondeterminism.

tests/histories holds one folder per release (v0.1.0/, ...), each with the histories recorded by
`python -m tests.record_histories` with that release's code. Every file of every release must
go on replaying with the current code; none may be removed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from durable_harness._client.history import replay_run
from harness.engine.contracts import SCOPE_WORKFLOW, TASK_WORKFLOW
from harness.engine.run import RunRequest
from infra.plugin import HarnessPlugin
from tests.support import execute_run, running_worker

HISTORIES = Path(__file__).parent.parent / "histories"
RECORDED = sorted(HISTORIES.glob("*/**/*.json"))
MIN_RECORDED = 229
ENTITY_WORKFLOWS = {TASK_WORKFLOW, SCOPE_WORKFLOW}
CLOSED = {
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
}


def _replayer() -> Replayer:
    return Replayer(workflows=[], plugins=[HarnessPlugin()])


def _history_id(path: Path) -> str:
    return path.relative_to(HISTORIES).with_suffix("").as_posix()


def _load(path: Path) -> WorkflowHistory:
    """The history under its recorded workflow id: the workflow derives ids from it (a child
    batch is `<run id>-batch-<n>`), so replaying under another id would not be the same run."""
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    started = history.events[0].workflow_execution_started_event_attributes
    if started.workflow_id:
        history = WorkflowHistory(started.workflow_id, history.events)
    return history


async def test_a_finished_run_replays_without_nondeterminism(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(
            client, task_queue, RunRequest(goal="Compare Paris, Atlantis and Tokyo")
        )
    history = await client.get_workflow_handle(result.run_id).fetch_history()
    replay = await _replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert replay.replay_failure is None


def test_no_recorded_history_has_gone_missing() -> None:
    stray = sorted(path.name for path in HISTORIES.glob("*.json"))
    assert not stray, f"histories belong in a release folder (tests/histories/vX.Y.Z/): {stray}"
    assert len(RECORDED) >= MIN_RECORDED, (
        f"{len(RECORDED)} recorded histories under {HISTORIES}, expected at least "
        f"{MIN_RECORDED}: {[_history_id(path) for path in RECORDED]}"
    )


@pytest.mark.parametrize("path", RECORDED, ids=_history_id)
async def test_recorded_history_replays(path: Path) -> None:
    """A run's history is of a finished run; an entity (a task, a scope's graph) may live for
    years, so its history may be open: it replays to its last event."""
    history = _load(path)
    started = history.events[0].workflow_execution_started_event_attributes
    if started.workflow_type.name not in ENTITY_WORKFLOWS:
        last = history.events[-1].event_type
        assert last in CLOSED, f"{_history_id(path)} is of an unfinished run"
    replay = await _replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert replay.replay_failure is None


async def test_a_recorded_run_replays_its_retries_at_the_times_its_attempts_started() -> None:
    path = HISTORIES / "v0.4.0" / "transient_fault_retried.json"
    replayed = await replay_run(_load(path))
    tokyo = [e for e in replayed.trace if e.node_id == "pop_tokyo"]
    assert [e.kind.value for e in tokyo] == [
        "node.start",
        "node.retry",
        "node.retry",
        "node.finish",
    ]
    assert [e.message for e in tokyo[1:3]] == ["attempt 2", "attempt 3"]
    assert tokyo[0].at < tokyo[1].at < tokyo[2].at < tokyo[3].at
