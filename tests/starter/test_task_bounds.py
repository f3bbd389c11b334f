"""A task filled to its byte bound with the largest records, on a real dev server, through
continue-as-new: every query and command still answers, and the next record is refused with
what to do (issue 32, F1: at 2,764 such facts continue-as-new failed PAYLOADS_TOO_LARGE forever
and the task answered nothing but "Workflow Task in failed state").

The test starts a dev server of its own that suggests continue-as-new after fewer events than
the default (the server's `limit.historyCount.suggestContinueAsNew`, which the task workflow
honours as it does in production), so a megabyte of records goes through two or more of them.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from durable_harness import TaskRefused
from durable_harness._client import tasks
from harness.engine.contracts import task_workflow_id
from harness.governance.state_size import json_bytes
from harness.governance.task_commands import (
    Complete,
    LedgerReceipt,
    RecordEvidence,
    RecordFact,
    ReviewSubmission,
    SetStatus,
    Submit,
    TaskCommand,
    TaskOperation,
)
from harness.governance.task_graph import CreateTask, GraphCommand
from harness.governance.task_ledger import FINISHING_RESERVE_BYTES, MAX_LEDGER_BYTES
from harness.governance.work import SUMMARY_CHARS, EvidenceKind, TaskStatus
from infra.plugin import HarnessPlugin
from starter.servers.dev_server import temporal_binary
from tests.starter.test_cli import harness
from tests.support import running_worker
from workflows import search_attributes

pytestmark = [
    pytest.mark.temporal,
    pytest.mark.requires_local_server("starts a dev server of its own"),
]

SUGGEST_NEW_RUN_AFTER_EVENTS = 600
"""About a third of the events filling a ledger takes, in batches (the default is 4,096)."""
BATCH = 8
"""The server takes at most 10 updates in flight per workflow."""
MAXIMAL_FACT = RecordFact(statement="s" * SUMMARY_CHARS, source="o" * SUMMARY_CHARS, confidence=0.5)
MOST_FACTS = 2_000
"""Far past what fits: a ledger still taking facts here has no bound."""


@asynccontextmanager
async def _server() -> AsyncIterator[Client]:
    suggest = f"limit.historyCount.suggestContinueAsNew={SUGGEST_NEW_RUN_AFTER_EVENTS}"
    environment = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        plugins=[HarnessPlugin()],
        dev_server_log_level="error",
        search_attributes=search_attributes.ALL_KEYS,
        dev_server_startup_timeout=timedelta(seconds=60),
        dev_server_extra_args=["--dynamic-config-value", suggest],
    )
    async with environment:
        yield environment.client


async def _send(
    client: Client, scope: str, operation: TaskOperation, actor: str
) -> LedgerReceipt | str:
    """The receipt, or the gateway's refusal (an update the server aborts as the task
    continues as new, durable_harness._client.tasks sends again)."""
    command = TaskCommand(task_id="task-1", actor=actor, operation=operation)
    try:
        return await tasks.task_command(client, scope, command)
    except TaskRefused as refused:
        return str(refused)


async def _runs(client: Client, workflow_id: str) -> list[WorkflowExecutionStatus | None]:
    return [
        execution.status
        async for execution in client.list_workflows(f"WorkflowId = '{workflow_id}'")
    ]


async def test_a_task_filled_to_its_bound_through_continue_as_new_answers_and_says_to_split_it(
    task_queue: str,
) -> None:
    scope = f"full-{uuid.uuid4().hex[:8]}"
    workflow_id = task_workflow_id(scope, "task-1")
    async with _server() as client, running_worker(client, task_queue):
        create = GraphCommand(scope=scope, actor="human:ops", operation=CreateTask(title="big"))
        assert (await tasks.scope_command(client, task_queue, create)).id == "task-1"
        evidence = RecordEvidence(kind=EvidenceKind.TEST, summary="the checks pass")
        assert isinstance(await _send(client, scope, evidence, "agent:planner"), LedgerReceipt)
        recorded, refusals = 0, list[str]()
        while not refusals and recorded < MOST_FACTS:
            answers = await asyncio.gather(
                *(_send(client, scope, MAXIMAL_FACT, "agent:planner") for _ in range(BATCH))
            )
            recorded += sum(isinstance(answer, LedgerReceipt) for answer in answers)
            refusals = [answer for answer in answers if isinstance(answer, str)]
        context = await tasks.context(client, scope, "task-1")
        state = await tasks.ledger(client, scope, "task-1")
        fact = await harness(
            "fact", "record", "task-1", "s" * SUMMARY_CHARS, "--source", "o" * SUMMARY_CHARS,
            "--confidence", "0.5", "--actor", "agent:planner", "--scope", scope,
            client=client, task_queue=task_queue,
        )  # fmt: skip
        blocked = await _send(client, scope, SetStatus(status=TaskStatus.BLOCKED), "agent:planner")
        active = await _send(client, scope, SetStatus(status=TaskStatus.ACTIVE), "agent:planner")
        submitted = await _send(
            client, scope, Submit(summary="done", evidence_ids=["ev-1"]), "system:harness"
        )
        approved = await _send(
            client, scope, ReviewSubmission(submission_id="sub-1", approve=True), "human:lead"
        )
        completed = await _send(client, scope, Complete(), "human:ops")
        done = await tasks.ledger(client, scope, "task-1")
        for _ in range(200):  # visibility is eventually consistent
            runs = await _runs(client, workflow_id)
            if runs.count(WorkflowExecutionStatus.CONTINUED_AS_NEW) >= 2:
                break
            await asyncio.sleep(0.1)
    assert recorded < MOST_FACTS, "the ledger took every fact: it has no bound"
    assert refusals and all("split it into subtasks" in reason for reason in refusals)
    assert refusals[0].startswith("task 'task-1' is full (")
    assert runs.count(WorkflowExecutionStatus.CONTINUED_AS_NEW) >= 2, runs
    assert len(context.valid_facts) == recorded == len(state.facts)
    assert MAX_LEDGER_BYTES * 0.99 < json_bytes(state) <= MAX_LEDGER_BYTES
    code, out, err = fact
    assert (code, out) == (2, "") and len(err.splitlines()) == 1, err
    assert "task 'task-1' is full (" in err and "split it into subtasks" in err
    for answer in (blocked, active, submitted, approved, completed):
        assert isinstance(answer, LedgerReceipt) and answer.accepted, answer
    assert done.task.status is TaskStatus.DONE
    assert json_bytes(done) <= MAX_LEDGER_BYTES + FINISHING_RESERVE_BYTES
    print(f"{recorded} facts of 500-character statement and source fill a task")


async def test_an_eval_suite_too_large_to_carry_is_refused_in_one_line_before_it_starts(
    client: Client, task_queue: str
) -> None:
    eval_id = f"eval-{uuid.uuid4().hex[:8]}"
    code, out, err = await harness(
        "eval", "--repeat", "20", "--no-start", "--id", eval_id,
        client=client, task_queue=task_queue,
    )  # fmt: skip
    assert (code, out) == (2, "") and len(err.splitlines()) == 1, err
    assert "would carry" in err and "split its cases into smaller suites" in err
    started = [e async for e in client.list_workflows(f"WorkflowId = '{eval_id}'")]
    assert started == []
