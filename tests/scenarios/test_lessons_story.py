"""The seeds' story, end to end, exactly as docs/tasks.md tells it: every `harness` line of its
walkthrough runs in order, through the CLI, against a worker and the payment service, and each
exits as its comment says. A lesson promoted into a rule stops the next refund task whose run
skipped the dispute lookup from completing; a repair run lets it complete, paying nothing twice."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.client import Client

from durable_harness._client import tasks
from tests.docs_pages import block_after, page
from tests.payment_service import PaymentService, payment_service
from tests.scenarios.test_refund_runs import refunds_worker
from tests.starter.test_cli import harness
from workflows import AgentRunWorkflow

pytestmark = pytest.mark.requires_local_server(
    "the payment service reports in real time; tasks are listed by search attributes"
)

ROOT = Path(__file__).parent.parent.parent
STORY = page("tasks").split("**The seeds' story, end to end**", 1)[1]
EXIT = re.compile(r"#\s*exit (\d)")


def walkthrough() -> list[tuple[list[str], int]]:
    """The walkthrough's commands (continuation lines joined), each with the exit code its
    comment names (0 when it names none)."""
    block = STORY.split("```bash", 1)[1].split("```", 1)[0]
    commands: list[tuple[list[str], int]] = []
    for line in block.replace("\\\n", " ").strip().splitlines():
        code, _, comment = line.partition("  #")
        expected = EXIT.search("#" + comment)
        commands.append((shlex.split(code), int(expected[1]) if expected else 0))
    return commands


def failed_completion_lines() -> list[str]:
    block = block_after(STORY, "The failed completion prints", "text")
    return block.strip().splitlines()[1:]  # after the `$ harness ...` line


async def _until(check: object, what: str, tries: int = 300) -> None:
    assert callable(check)
    for _ in range(tries):
        if await check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
async def service(client: Client, tmp_path: Path) -> AsyncIterator[PaymentService]:
    async with payment_service(client, tmp_path) as running:
        yield running


async def test_the_docs_lessons_walkthrough_runs_as_written(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    scope = f"shop-{uuid.uuid4().hex[:6]}"
    outputs: list[tuple[str, int, str, str]] = []
    runs: list[tuple[str, str]] = []

    async def waiting_or_done(run_id: str) -> bool:
        description = await client.get_workflow_handle(run_id).describe()
        if description.close_time is not None:
            return True
        waits = await client.get_workflow_handle(run_id).query(AgentRunWorkflow.waits)
        return any(w.status.value == "PENDING" for w in waits)

    async def reported(run_id: str, task_id: str) -> bool:
        state = await tasks.ledger(client, scope, task_id)
        return any(run.run_id == run_id and run.ended for run in state.task.runs)

    async def step(words: list[str], expected: int) -> None:
        args = [
            word.replace("shop-B", scope).replace("docs/examples/", f"{ROOT}/docs/examples/")
            for word in words[1:]
        ]
        if args[0] == "run":
            args.append("--no-wait")
        code, out, err = await harness(*args, client=client, task_queue=task_queue)
        line = shlex.join(words)
        assert code == expected, f"{line}\nexit {code}\n{out}{err}"
        outputs.append((line, code, out, err))
        if args[0] == "run":
            run_id, task_id = args[args.index("--id") + 1], args[args.index("--task") + 1]
            runs.append((run_id, task_id))
            await _until(lambda: waiting_or_done(run_id), f"{run_id} to wait or end")
        if args[0] == "approve" or (args[0] == "run" and "--plan" not in args):
            run_id, task_id = runs[-1]  # approved, or a repair run that asks no approval
            await _until(lambda: reported(run_id, task_id), f"{run_id} to report")

    async with refunds_worker(client, task_queue, service):
        for words, expected in walkthrough():
            await step(words, expected)
        first = await tasks.ledger(client, scope, "task-1")
        second = await tasks.ledger(client, scope, "task-2")
        _, lessons, _ = await harness(
            "lesson", "list", "--scope", scope, "--json", client=client, task_queue=task_queue
        )

    refused = [err.strip() for _, code, _, err in outputs if code == 2]
    for why in refused:
        assert why.count("\n") == 0 and "Traceback" not in why, why  # one line, no stack
    said = " | ".join(refused)
    assert "did you mean 'refund'" in said
    assert "an agent can never resolve a lesson" in said
    assert "an agent can never promote a rule" in said
    assert "allow_system_promotion off" in said
    assert "an agent can never review a submission" in said
    assert "an agent can never complete a task" in said
    # the failed completion prints each gate as docs/tasks.md shows, and leaves it IN_REVIEW
    (failed,) = [out for _, code, out, _ in outputs if code == 1]
    assert failed.strip().splitlines() == failed_completion_lines()
    assert first.task.status.value == "DONE" and second.task.status.value == "DONE"
    assert [g.gate for g in first.acceptances] == [
        "approved-review",
        "completion-evidence",
        "payment-verified",
    ]
    completions = {g.completion for g in second.acceptances}
    assert completions == {1, 2}
    assert all(g.passed for g in second.acceptances if g.completion == 2)
    assert "dispute-status-checked" in {g.gate for g in second.acceptances if g.completion == 2}
    # the repair run is recorded as one, and its submission carries the refund paid earlier
    repair = second.task.runs[-1]
    assert repair.repair_of == f"{scope}-run-2"
    sub2 = second.submissions[-1]
    tools = {e.tool for e in second.evidence if e.id in sub2.evidence_ids}
    assert {"check_dispute_status", "submit_refund", "find_refund"} <= tools
    assert len(await service.payments("A-3002")) == 1
    assert len(await service.payments("A-3003")) == 1
    # the lesson's lineage: rule -> lesson -> fact -> evidence
    listed = next(out for line, _, out, _ in outputs if line.startswith("harness lesson list"))
    assert "rule rule-1 (preset refund)" in listed
    rules = json.loads(lessons)
    assert rules["lessons"][0]["evidence"] == [f"run:{scope}-run-1/node:refund"]
    assert rules["rules"][0]["lesson_id"] == "lesson-1"
