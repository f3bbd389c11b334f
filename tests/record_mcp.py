"""Record the histories of runs over MCP tools for the replay tests: `python -m tests.record_mcp
[OUTDIR]` (the release folder of tests.record_histories by default).

Two repo runs on a repository made here, worked by the real git MCP server (mcp-server-git) and
the offline provider: a question answered from log, show and diff lookups, and a plan whose
destructive git_reset is rejected. An existing file is never overwritten."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from durable_harness._client.run_results import result_of
from durable_harness._client.runs import start_run
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.contracts import APPROVE_UPDATE
from harness.engine.run import RunPhase, RunRequest
from harness.waits.deliveries import ApprovalRequest
from harness.waits.wait_book import Decision
from infra.plugin import HarnessPlugin
from infra.settings import Settings
from starter.servers.dev_server import temporal_binary
from tests.mcp_servers.repositories import hub_over, make_repository
from tests.record_histories import _check_checkout, _write_new, release_folder
from tests.support import deliver_update, pending_wait, running_worker
from workflows import AgentRunWorkflow, search_attributes

TASK_QUEUE = "record-mcp"
QUESTION = "What changed in the scheduler in the last 20 commits, and why?"
RESET = Plan(
    nodes=[
        PlanNode(id="log", tool="git_log", arguments=[ArgumentBinding.literal("max_count", 3)]),
        PlanNode(id="reset", tool="git_reset", arguments=[]),
        PlanNode(
            id="report",
            tool="write_repo_report",
            arguments=[
                ArgumentBinding.literal("question", "reset the index"),
                ArgumentBinding.node_result("log", "log"),
            ],
            deps=["log", "reset"],
        ),
    ]
)


async def main(argv: Sequence[str] | None = None) -> int:
    _check_checkout()
    args = list(argv if argv is not None else sys.argv[1:])
    outdir = Path(args[0]) if args else release_folder()
    wanted = {
        "repo_question": (RunRequest(goal=QUESTION, scenario="repo"), RunPhase.SUCCEEDED),
        "repo_reset_rejected": (
            RunRequest(goal="reset the index", scenario="repo", plan=RESET),
            RunPhase.FAILED_EXECUTION,
        ),
    }
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        plugins=[HarnessPlugin()],
        dev_server_log_level="warn",
        search_attributes=search_attributes.ALL_KEYS,
    )
    with tempfile.TemporaryDirectory() as folder:
        make_repository(Path(folder) / "repo", commits=24)
        hub = hub_over(Path(folder) / "repo")
        async with env, running_worker(env.client, TASK_QUEUE, mcp=hub):
            for name, (request, expected) in wanted.items():
                path = outdir / f"{name}.json"
                if path.exists():
                    print(f"{name}: skipped, already recorded: {path}")
                    continue
                run_id = f"{name.replace('_', '-')}-recorded"
                await start_run(env.client, Settings(task_queue=TASK_QUEUE), request, run_id)
                handle = env.client.get_workflow_handle_for(AgentRunWorkflow.run, run_id)
                if request.plan is not None:
                    await pending_wait(handle, "approve-reset")
                    await deliver_update(
                        handle,
                        APPROVE_UPDATE,
                        ApprovalRequest(
                            wait_id="approve-reset", decision=Decision.REJECT, actor="human:ops"
                        ),
                    )
                result = await result_of(env.client, handle)
                if result.status is not expected:
                    print(f"{name}: ended {result.status.value}, not {expected.value}: NOT written")
                    return 1
                history = await handle.fetch_history()
                outdir.mkdir(parents=True, exist_ok=True)
                _write_new(path, history)
                print(f"{name}: {history.workflow_id}, {len(history.events)} events")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
