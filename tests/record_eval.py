"""Record the history of an eval suite for the replay tests: `python -m tests.record_eval
[OUTDIR]` (the release folder of tests.record_histories by default). Cases run with memory off.

The suite has three cases, on the offline provider and a worker of this checkout: a cities goal
that replans (Atlantis), a synthetic side effect approved by a scripted approval, and one whose
expectation fails, so its history holds child runs, the case activities and a scripted update.
An existing file is never overwritten."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from harness.evals.eval_case import CaseFile
from harness.evals.eval_report import EvalRequest
from infra.plugin import HarnessPlugin
from starter.servers.dev_server import temporal_binary
from tests.record_histories import _check_checkout, _write_new, release_folder
from tests.support import running_worker
from workflows import EvalSuiteWorkflow, search_attributes

NAME = "eval_suite"
CASES = {
    "scenario": "cities",
    "cases": [
        {
            "id": "atlantis",
            "goal": "Compare Paris, Atlantis and Tokyo",
            "expect": {"min_replans": 1, "mentions": ["Atlantis"]},
        },
        {"id": "broken", "goal": "Compare Paris and Tokyo", "expect": {"mentions": ["Berlin"]}},
    ],
}
APPROVED = {
    "scenario": "synthetic",
    "cases": [
        {
            "id": "approved",
            "goal": "change prod",
            "options": {
                "plan": {
                    "nodes": [
                        {
                            "id": "change",
                            "tool": "side_effect",
                            "arguments": [{"name": "target", "kind": "LITERAL", "value": "prod"}],
                        },
                        {
                            "id": "final",
                            "tool": "collect",
                            "deps": ["change"],
                            "arguments": [
                                {"name": "inputs", "kind": "NODE_RESULT", "node_id": "change"}
                            ],
                        },
                    ]
                },
                "approvals": [{"decision": "approve"}],
            },
            "expect": {"waits": ["APPROVAL"]},
        }
    ],
}


async def main(argv: Sequence[str] | None = None) -> int:
    _check_checkout()
    args = list(argv if argv is not None else sys.argv[1:])
    outdir = Path(args[0]) if args else release_folder()
    path = outdir / f"{NAME}.json"
    if path.exists():
        print(f"{NAME}: skipped, already recorded: {path}")
        return 0
    cases = [*CaseFile.model_validate(CASES).cases, *CaseFile.model_validate(APPROVED).cases]
    request = EvalRequest(cases=cases, concurrency=2, search_attributes=True)
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        plugins=[HarnessPlugin()],
        dev_server_log_level="warn",
        search_attributes=search_attributes.ALL_KEYS,
    )
    async with env, running_worker(env.client, "record-eval"):
        handle = await env.client.start_workflow(
            EvalSuiteWorkflow.run, request, id="eval-recorded", task_queue="record-eval"
        )
        report = await handle.result()
        history = await handle.fetch_history()
    verdicts = {result.case: result.passed for result in report.results}
    if verdicts != {"cities/atlantis": True, "cities/broken": False, "synthetic/approved": True}:
        print(f"{NAME}: unexpected verdicts {verdicts}: NOT written")
        return 1
    outdir.mkdir(parents=True, exist_ok=True)
    _write_new(path, history)
    print(f"{NAME}: {history.workflow_id}, {len(history.events)} events")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
