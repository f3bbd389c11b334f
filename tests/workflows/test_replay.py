"""Workflow code changes must keep recorded histories replaying without nondeterminism."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from harness.run import RunRequest
from infra.converter import DATA_CONVERTER
from tests.support import execute_run, running_worker
from workflows import AgentRunWorkflow

HISTORIES = Path(__file__).parent.parent / "histories"


def _replayer() -> Replayer:
    return Replayer(workflows=[AgentRunWorkflow], data_converter=DATA_CONVERTER)


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


@pytest.mark.parametrize("path", sorted(HISTORIES.glob("*.json")), ids=lambda p: p.stem)
async def test_recorded_history_replays(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    replay = await _replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert replay.replay_failure is None
