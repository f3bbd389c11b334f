"""Tasks on a real dev server: the scope's graph and each task's ledger are workflows whose
updates are the gateway; refused commands change nothing."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from temporalio.client import Client

from durable_harness import TaskRefused
from durable_harness._client import tasks
from durable_harness._client.run_results import result_of
from harness.engine.run import RunPhase, RunRequest
from harness.governance.task_commands import (
    AddRelation,
    InvalidateFact,
    RecordEvidence,
    RecordFact,
    SetStatus,
    TaskCommand,
    TaskOperation,
)
from harness.governance.task_graph import AddDependency, CreateTask, GraphCommand, GraphOperation
from harness.governance.work import (
    EntityKind,
    EntityRef,
    EvidenceKind,
    RelationType,
    TaskBinding,
    TaskStatus,
)
from tests.factories import collect, delay, node, synthetic_plan
from tests.starter.test_cli import harness
from tests.support import execute_run, pending_wait, running_worker, start_run
from workflows import AgentRunWorkflow

pytestmark = pytest.mark.requires_local_server("tasks are listed by the HarnessTask* attributes")

HUMAN, AGENT = "human:ops", "agent:planner"


def new_scope() -> str:
    return f"shop-{uuid.uuid4().hex[:8]}"


async def graph_command(
    client: Client, task_queue: str, scope: str, operation: GraphOperation, actor: str = HUMAN
) -> str:
    command = GraphCommand(scope=scope, actor=actor, operation=operation)
    receipt = await tasks.scope_command(client, task_queue, command)
    assert receipt.accepted and receipt.id, receipt.reason
    return receipt.id


async def task_command(
    client: Client,
    scope: str,
    task_id: str,
    operation: TaskOperation,
    actor: str = AGENT,
    key: str | None = None,
) -> str:
    command = TaskCommand(task_id=task_id, actor=actor, operation=operation, idempotency_key=key)
    receipt = await tasks.task_command(client, scope, command)
    assert receipt.accepted and receipt.id, receipt.reason
    return receipt.id


async def test_a_tasks_ledger_holds_facts_evidence_and_the_relation_between_them(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        task = await graph_command(client, task_queue, scope, CreateTask(title="refund A-1001"))
        evidence = await task_command(
            client,
            scope,
            task,
            RecordEvidence(kind=EvidenceKind.TOOL, summary="policy", content_ref="run:r/node:p"),
        )
        fact = await task_command(
            client,
            scope,
            task,
            RecordFact(statement="A-1001 is eligible", source="policy", confidence=0.9),
        )
        await task_command(
            client,
            scope,
            task,
            AddRelation(
                source=EntityRef(kind=EntityKind.EVIDENCE, id=evidence),
                target=EntityRef(kind=EntityKind.FACT, id=fact),
                type=RelationType.SUPPORTS,
            ),
        )
        seen = await tasks.context(client, scope, task)
    assert [f.statement for f in seen.valid_facts] == ["A-1001 is eligible"]
    assert [e.content_ref for e in seen.recent_evidence] == ["run:r/node:p"]
    assert (seen.relations[0].source.id, seen.relations[0].target.id) == (evidence, fact)


async def test_a_cycle_across_three_tasks_is_refused_and_nothing_changes(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        a, b, c = [
            await graph_command(client, task_queue, scope, CreateTask(title=name)) for name in "abc"
        ]
        await graph_command(client, task_queue, scope, AddDependency(task_id=a, depends_on=b))
        await graph_command(client, task_queue, scope, AddDependency(task_id=b, depends_on=c))
        before = await tasks.graph(client, scope)
        with pytest.raises(TaskRefused, match="would close a cycle"):
            await tasks.scope_command(
                client,
                task_queue,
                GraphCommand(
                    scope=scope, actor=HUMAN, operation=AddDependency(task_id=c, depends_on=a)
                ),
            )
        after = await tasks.graph(client, scope)
    assert after == before


async def test_an_agent_cannot_cancel_a_task_a_person_can_and_it_lists_by_status(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        task = await graph_command(client, task_queue, scope, CreateTask(title="refund"))
        other = await graph_command(client, task_queue, scope, CreateTask(title="other"))
        cancel = SetStatus(status=TaskStatus.CANCELLED, reason="duplicate ticket")
        with pytest.raises(TaskRefused, match="an agent cannot set a task CANCELLED"):
            await task_command(client, scope, task, cancel, actor=AGENT)
        await task_command(client, scope, task, cancel, actor=HUMAN)
        with pytest.raises(TaskRefused, match="a finished task is final"):
            await task_command(
                client, scope, task, RecordFact(statement="x", source="y", confidence=1)
            )
        listed: list[tuple[str, str]] = []
        # visibility is eventually consistent, and the task tells its graph by a signal the
        # graph checks against the task (an activity) before it applies it: wait for both
        for _ in range(600):
            listed = await tasks.listed(client, scope, TaskStatus.ACTIVE)
            state = await tasks.graph(client, scope)
            if listed == [(other, "ACTIVE")] and state.tasks[task].status is TaskStatus.CANCELLED:
                break
            await asyncio.sleep(0.1)
    assert listed == [(other, "ACTIVE")]
    assert state.tasks[task].status is TaskStatus.CANCELLED  # the task told its graph


async def test_one_idempotency_key_applies_once_and_refuses_other_content(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    fact = RecordFact(statement="A-1001 is eligible", source="policy", confidence=0.9)
    async with running_worker(client, task_queue):
        task = await graph_command(client, task_queue, scope, CreateTask(title="refund"))
        first = await task_command(client, scope, task, fact, key="k1")
        again = await task_command(client, scope, task, fact, key="k1")
        with pytest.raises(TaskRefused, match="already used with other content"):
            await task_command(
                client, scope, task, fact.model_copy(update={"confidence": 0.2}), key="k1"
            )
        await task_command(client, scope, task, InvalidateFact(fact_id=first, reason="disputed"))
        state = await tasks.ledger(client, scope, task)
    assert first == again
    assert len(state.facts) == 1 and not state.facts[0].valid
    assert state.facts[0].invalidation_reason == "disputed"


async def test_the_cli_keeps_a_tasks_ledger_and_refuses_bad_writes_with_exit_2(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()

    async def cli(*args: str) -> tuple[int, str, str]:
        return await harness(*args, "--scope", scope, client=client, task_queue=task_queue)

    async with running_worker(client, task_queue):
        created = await cli("task", "create", "Refund A-1001", "--actor", "human:ops")
        first = await cli("task", "create", "check dispute", "--actor", "agent:planner")
        depend = await cli("task", "depend", "task-1", "task-2", "--actor", "human:ops")
        cycle = await cli("task", "depend", "task-2", "task-1", "--actor", "human:ops")
        fact = await cli(
            "fact", "record", "task-1", "A-1001 is eligible", "--source", "policy",
            "--confidence", "0.9", "--actor", "agent:planner",
        )  # fmt: skip
        cancel = await cli("task", "cancel", "task-1", "--actor", "agent:planner")
        decision = await cli(
            "decision", "propose", "task-1", "refund in full?", "--proposal", "yes",
            "--actor", "agent:planner",
        )  # fmt: skip
        resolve = await cli(
            "decision", "resolve", "task-1", "dec-1", "--reason", "ok", "--actor", "agent:planner"
        )
        context = await cli("context", "task-1", "--json")
        await cli(
            "evidence", "record", "task-2", "--kind", "EXTERNAL", "--summary", "no dispute",
            "--actor", "agent:planner",
        )  # fmt: skip
        # a person submits: an agent never does
        await cli("submit", "task-2", "--summary", "checked", "--evidence", "ev-1",
                  "--actor", "human:analyst")  # fmt: skip
        early = await cli("task", "complete", "task-2", "--actor", "human:ops")
        await cli("review", "task-2", "sub-1", "--approve", "--actor", "human:lead")
        complete = await cli("task", "complete", "task-2", "--actor", "human:ops")
        for _ in range(100):  # visibility is eventually consistent
            listed = await cli("task", "list", "--status", "ACTIVE", "--json")
            if json.loads(listed[1]) == [{"id": "task-1", "status": "ACTIVE"}]:
                break
            await asyncio.sleep(0.1)
        for _ in range(100):  # the graph hears of task-2's status by signal
            runnable = await cli("task", "runnable")
            if runnable[1] == "task-1  Refund A-1001\n":
                break
            await asyncio.sleep(0.1)
    assert early[0] == 1  # a gate failed: the task stays IN_REVIEW
    assert "FAIL  approved-review: submission 'sub-1' is PENDING, not APPROVED" in early[1]
    assert "PASS  completion-evidence: 1 evidence record(s), all in this task" in early[1]
    assert complete[0] == 0 and "task-2: task is DONE: every gate passed" in complete[1]
    assert json.loads(listed[1]) == [{"id": "task-1", "status": "ACTIVE"}]
    assert runnable[1] == "task-1  Refund A-1001\n"  # its dependency is DONE now
    assert [created[1], first[1], depend[1], fact[1], decision[1]] == [
        "task-1: task created\n",
        "task-2: task created\n",
        "task-1: now depends on task-2\n",
        "fact-1: fact recorded\n",
        "dec-1: decision proposed\n",
    ]
    for code, out, err in (cycle, cancel, resolve):
        assert (code, out) == (2, "")
        assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "would close a cycle: task-2 -> task-1 -> task-2" in cycle[2]
    assert "an agent cannot set a task CANCELLED" in cancel[2]
    assert "an agent can never resolve a decision" in resolve[2]
    seen = json.loads(context[1])
    assert seen["task"]["status"] == "ACTIVE"
    assert [f["statement"] for f in seen["valid_facts"]] == ["A-1001 is eligible"]
    assert [d["status"] for d in seen["open_decisions"]] == ["PROPOSED"]


async def test_a_task_is_worked_on_by_two_runs_in_turn_across_worker_restarts(
    client: Client, task_queue: str
) -> None:
    """Each run binds itself, leaves one TOOL evidence record per node it finished (a reference
    to run and node), and says how it ended; the task outlives both workers."""
    scope = new_scope()
    run_ids = [f"run-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    async with running_worker(client, task_queue):
        task = await graph_command(client, task_queue, scope, CreateTask(title="compare cities"))
        code, _, err = await harness(
            "run", "Compare Paris and Tokyo", "--task", task, "--scope", scope,
            "--id", run_ids[0], client=client, task_queue=task_queue,
        )  # fmt: skip
        assert code == 0, err
    async with running_worker(client, task_queue):  # another worker, the same task
        code, _, err = await harness(
            "run", "Compare Paris and Tokyo", "--task", task, "--scope", scope,
            "--id", run_ids[1], client=client, task_queue=task_queue,
        )  # fmt: skip
        assert code == 0, err
        state = await tasks.ledger(client, scope, task)
    assert [(run.run_id, run.ended) for run in state.task.runs] == [
        (run_ids[0], "SUCCEEDED"),
        (run_ids[1], "SUCCEEDED"),
    ]
    for run_id in run_ids:
        refs = sorted(e.content_ref or "" for e in state.evidence if e.run_id == run_id)
        assert len(refs) == 7  # every node of the plan
        assert f"run:{run_id}/node:pop_paris" in refs
    assert {e.kind for e in state.evidence} == {EvidenceKind.TOOL}
    assert {e.recorded_by for e in state.evidence} == {"system:harness"}


async def test_a_run_on_a_finished_or_unknown_task_is_refused_before_it_starts(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        task = await graph_command(client, task_queue, scope, CreateTask(title="x"))
        await task_command(client, scope, task, SetStatus(status=TaskStatus.CANCELLED), actor=HUMAN)
        done = await harness(
            "run", "Compare Paris and Tokyo", "--task", task, "--scope", scope,
            client=client, task_queue=task_queue,
        )  # fmt: skip
        unknown = await harness(
            "run", "Compare Paris and Tokyo", "--task", "task-9", "--scope", scope,
            client=client, task_queue=task_queue,
        )  # fmt: skip
    assert done[0] == 2 and "is CANCELLED: a finished task is final" in done[2]
    assert unknown[0] == 2 and f"scope '{scope}' has no task 'task-9'" in unknown[2]


async def test_a_task_with_2000_records_continues_as_new_and_keeps_them_all(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        task = await graph_command(client, task_queue, scope, CreateTask(title="big"))
        operations: list[TaskOperation] = []
        for n in range(1000):
            operations.append(RecordFact(statement=f"fact {n}", source="test", confidence=0.5))
            operations.append(
                RecordEvidence(kind=EvidenceKind.TEST, summary=f"check {n}", location=f"t/{n}")
            )
        for start in range(0, len(operations), 8):
            await asyncio.gather(
                *(
                    task_command(client, scope, task, operation, key=f"k{start + i}")
                    for i, operation in enumerate(operations[start : start + 8])
                )
            )
        seen = await tasks.context(client, scope, task)
        handle = client.get_workflow_handle(f"{scope}/{task}")
        description = await handle.describe()
        first_run_id = description.raw_description.workflow_execution_info.first_run_id
        first_run = await client.get_workflow_handle(
            f"{scope}/{task}", run_id=first_run_id
        ).describe()
    assert len(seen.valid_facts) == 1000 and seen.evidence_count == 1000
    assert description.history_length < 10_000
    assert first_run.status is not None and first_run.status.name == "CONTINUED_AS_NEW"


async def test_a_run_that_creates_a_task_is_bound_to_it_from_then_on(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    plan = synthetic_plan(
        node("open", "harness_task_manage", action="create", title="follow up", scope=scope),
        delay("work", 5),
        collect("final", ["open", "work"]),
    )
    request = RunRequest(goal="open a task", scenario="synthetic", plan=plan)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
        state = await tasks.ledger(client, scope, "task-1")
    assert result.status is RunPhase.SUCCEEDED
    assert state.task.created_by == f"agent:{result.run_id}"
    assert [(run.run_id, run.ended) for run in state.task.runs] == [(result.run_id, "SUCCEEDED")]
    assert sorted(e.node_id or "" for e in state.evidence) == ["final", "open", "work"]


async def test_the_context_tool_shows_the_task_and_the_waits_its_runs_hold_open(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    plan = synthetic_plan(
        node("change", "side_effect", target="prod"),
        node("look", "harness_context_get"),
        collect("final", ["change", "look"]),
    )
    async with running_worker(client, task_queue):
        task = await graph_command(client, task_queue, scope, CreateTask(title="change prod"))
        await task_command(
            client, scope, task, RecordFact(statement="prod is up", source="ops", confidence=1)
        )
        request = RunRequest(
            goal="change prod", scenario="synthetic", plan=plan,
            task=TaskBinding(scope=scope, task_id=task),
        )  # fmt: skip
        handle = await start_run(client, task_queue, request)
        await pending_wait(handle, "approve-change")
        for _ in range(100):  # until the context node has run beside the pending approval
            status = await handle.query(AgentRunWorkflow.status)
            if any(n.id == "look" and n.status.value == "DONE" for n in status.nodes):
                break
            await asyncio.sleep(0.05)
        await handle.signal(
            "approve", {"wait_id": "approve-change", "decision": "approve", "actor": "human:ops"}
        )
        result = await result_of(client, handle)
    look: Any = next(n for n in result.nodes if n.id == "look").result
    assert [f["statement"] for f in look["valid_facts"]] == ["prod is up"]
    (wait,) = look["open_waits"]
    assert (wait["run_id"], wait["wait_id"], wait["kind"]) == (
        result.run_id,
        "approve-change",
        "APPROVAL",
    )


async def test_a_run_whose_task_refuses_its_reports_still_runs_to_its_end(
    client: Client, task_queue: str
) -> None:
    """The ledger is not the run's outcome: a task that is gone refuses, the run goes on."""
    request = RunRequest(
        goal="Compare Paris and Tokyo", task=TaskBinding(scope=new_scope(), task_id="task-9")
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
