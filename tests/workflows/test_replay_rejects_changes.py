"""The replay suite can fail: a recorded history replayed against a deliberately changed run
workflow is rejected as nondeterministic, while the same workflow unchanged replays it.

Each changed workflow is registered under the run's workflow name in a replayer of its own
(the data converter of the plugin, unsandboxed, as `durable_harness._client.history` replays), so
only the change differs from what tests/workflows/test_replay.py replays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner, WorkflowReplayResult

from harness.engine.contracts import RUN_WORKFLOW
from harness.engine.run import RunRequest, RunResult
from infra.converter import DATA_CONVERTER
from workflows import AgentRunWorkflow
from workflows.patches import WORK_CONTRACT_PATCH

HISTORIES = Path(__file__).parent.parent / "histories"
BEFORE_CONTRACTS = HISTORIES / "v0.4.0" / "cities_three.json"
"""A cities run of 0.4.0: recorded before runs were held to their scope's contract."""


@workflow.defn(name=RUN_WORKFLOW)
class UnchangedRun(AgentRunWorkflow):
    """The run workflow as it is, registered the way the changed ones are."""

    @workflow.run
    async def run(self, request: RunRequest) -> RunResult:
        return await super().run(request)


@workflow.defn(name=RUN_WORKFLOW)
class RunWithATimerFirst(AgentRunWorkflow):
    """One command more than the recorded run issued: a timer before anything else."""

    @workflow.run
    async def run(self, request: RunRequest) -> RunResult:
        await workflow.sleep(timedelta(milliseconds=1))
        return await super().run(request)


def _history(path: Path) -> WorkflowHistory:
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    started = history.events[0].workflow_execution_started_event_attributes
    return WorkflowHistory(started.workflow_id or path.stem, history.events)


async def _replay(run: type[AgentRunWorkflow], path: Path) -> WorkflowReplayResult:
    replayer = Replayer(
        workflows=[run],
        data_converter=DATA_CONVERTER,
        workflow_runner=UnsandboxedWorkflowRunner(),
    )
    return await replayer.replay_workflow(_history(path), raise_on_replay_failure=False)


@pytest.fixture
def contract_patch_check_removed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every run takes the path behind WORK_CONTRACT_PATCH, as if its `workflow.patched` check
    had been deleted: a run from before it reads a contract its history never read."""
    asked: Callable[[str], bool] = workflow.patched

    def patched(patch_id: str) -> bool:
        return True if patch_id == WORK_CONTRACT_PATCH else asked(patch_id)

    monkeypatch.setattr(workflow, "patched", patched)
    yield


async def test_the_unchanged_run_workflow_replays_the_recorded_history() -> None:
    replay = await _replay(UnchangedRun, BEFORE_CONTRACTS)

    assert replay.replay_failure is None


async def test_a_run_workflow_issuing_one_more_command_is_rejected_as_nondeterministic() -> None:
    replay = await _replay(RunWithATimerFirst, BEFORE_CONTRACTS)

    assert isinstance(replay.replay_failure, workflow.NondeterminismError), replay.replay_failure


@pytest.mark.usefixtures("contract_patch_check_removed")
async def test_a_run_workflow_with_a_patch_check_removed_is_rejected_as_nondeterministic() -> None:
    replay = await _replay(UnchangedRun, BEFORE_CONTRACTS)

    assert isinstance(replay.replay_failure, workflow.NondeterminismError), replay.replay_failure
