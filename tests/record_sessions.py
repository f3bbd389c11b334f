"""Record the histories of an agent session for the replay tests: `python -m tests.record_sessions
[OUTDIR]` (the release folder of tests.record_histories by default).

One session on the synthetic pack and the offline agent, three slices: a message answered
(DONE), a message whose agent asks the user (WAITING), and the slice the answer resumes. The
session continues as new between slices, so each of its runs is a history of its own (the
session's three closed runs), and each slice is a child workflow (three more). An existing file
is never overwritten."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from durable_harness.client import Harness
from harness.engine.contracts import ANSWER_UPDATE
from harness.engine.sessions import SessionStatus, session_workflow_id
from harness.waits.deliveries import AnswerRequest
from harness.waits.wait_book import DeliveryReceipt
from infra.plugin import HarnessPlugin
from infra.settings import Settings
from starter.servers.dev_server import temporal_binary
from tests.record_histories import _check_checkout, _write_new, release_folder
from tests.support import running_worker
from workflows import search_attributes

NAME = "session_conversation"
TASK_QUEUE = "record-sessions"
SESSION = "recorded"


async def main(argv: Sequence[str] | None = None) -> int:
    _check_checkout()
    args = list(argv if argv is not None else sys.argv[1:])
    outdir = Path(args[0]) if args else release_folder()
    names = [f"{NAME}_run_{n}" for n in (1, 2, 3)] + [f"{NAME}_slice_{n}" for n in (1, 2, 3)]
    existing = [name for name in names if (outdir / f"{name}.json").exists()]
    if existing:
        print(f"{NAME}: skipped, already recorded: {', '.join(existing)}")
        return 0
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        plugins=[HarnessPlugin()],
        dev_server_log_level="warn",
        search_attributes=search_attributes.ALL_KEYS,
    )
    workflow_id = session_workflow_id("default", SESSION)
    async with env, running_worker(env.client, TASK_QUEUE):
        harness = Harness(env.client, Settings(task_queue=TASK_QUEUE))
        start: dict[str, Any] = {"scenario": "synthetic", "tools": ["echo", "delay"]}
        first = await harness.send(SESSION, "Find the code. value: 42", **start)
        asked = await harness.send(SESSION, "Ask me which year. question: Which year?", **start)
        handle = env.client.get_workflow_handle(workflow_id)
        receipt = await handle.execute_update(
            ANSWER_UPDATE,
            AnswerRequest(wait_id=asked.wait_id or "", text="1999", actor="human:recorder"),
            result_type=DeliveryReceipt,
        )
        answered = await harness.send(SESSION, None)
        runs = [run async for run in env.client.list_workflows(f'WorkflowId="{workflow_id}"')]
        closed = sorted(
            (run for run in runs if run.status == WorkflowExecutionStatus.CONTINUED_AS_NEW),
            key=lambda run: run.start_time,
        )
        histories = [
            await env.client.get_workflow_handle(workflow_id, run_id=run.run_id).fetch_history()
            for run in closed[:3]
        ]
        histories += [
            await env.client.get_workflow_handle(f"{workflow_id}-slice-{n}").fetch_history()
            for n in (1, 2, 3)
        ]
    statuses = [first.status, asked.status, answered.status]
    if statuses != [SessionStatus.DONE, SessionStatus.WAITING, SessionStatus.DONE]:
        print(f"{NAME}: unexpected replies {statuses}: NOT written")
        return 1
    if not receipt.accepted or len(closed) < 3:
        print(f"{NAME}: answer {receipt}, {len(closed)} closed runs: NOT written")
        return 1
    outdir.mkdir(parents=True, exist_ok=True)
    for name, history in zip(names, histories, strict=True):
        _write_new(outdir / f"{name}.json", history)
        print(f"{name}: {history.workflow_id}, {len(history.events)} events")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
