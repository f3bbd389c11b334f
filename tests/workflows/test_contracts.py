"""A scope's contract on a real dev server: runs in the scope are held to it from their start
(no run option relaxes it), completions and a system's approvals are judged by it, and a
promoted rule binds the next run; refusals change nothing."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from durable_harness import Harness, Settings, TaskRefused
from durable_harness._client import tasks
from durable_harness._client.run_results import result_of
from harness.engine.contracts import APPROVE_UPDATE, PLAN_ACTIVITY
from harness.engine.messages import PlanRequest
from harness.engine.run import RunPhase, RunRequest
from harness.engine.trace import TraceKind
from harness.governance.host_contract import Contract, RuleKind
from harness.governance.scope_rules import (
    PromoteLesson,
    ProposeLesson,
    ResolveLesson,
    RevokeRule,
    RulesCommand,
    RulesOperation,
    SetContract,
)
from harness.governance.task_commands import (
    Complete,
    LedgerReceipt,
    ReviewSubmission,
    Submit,
    TaskCommand,
)
from harness.governance.task_graph import CreateTask, GraphCommand
from harness.governance.work import TaskBinding, TaskStatus
from harness.waits.deliveries import ApprovalRequest
from harness.waits.wait_book import WaitKind
from tests.factories import collect, delay, synthetic_plan
from tests.support import deliver_update, execute_run, pending_wait, running_worker, start_run

pytestmark = pytest.mark.requires_local_server("tasks are listed by the HarnessTask* attributes")

HUMAN, SYSTEM, AGENT = "human:ops-lead", "system:ops-bot", "agent:planner"
PLAN = synthetic_plan(delay("a", 1), collect("out", ["a"]))


def new_scope() -> str:
    return f"shop-{uuid.uuid4().hex[:8]}"


async def rules(client: Client, task_queue: str, scope: str, operation: RulesOperation,
                actor: str = HUMAN) -> str:  # fmt: skip
    command = RulesCommand(scope=scope, actor=actor, operation=operation)
    receipt = await tasks.rules_command(client, task_queue, command)
    assert receipt.accepted and receipt.id, receipt.reason
    return receipt.id


async def new_task(client: Client, task_queue: str, scope: str, preset: str | None = None) -> str:
    command = GraphCommand(scope=scope, actor=HUMAN, operation=CreateTask(title="t", preset=preset))
    receipt = await tasks.scope_command(client, task_queue, command)
    assert receipt.accepted and receipt.id, receipt.reason
    return receipt.id


def bound(scope: str, task: str, **options: object) -> RunRequest:
    return RunRequest.model_validate(
        {
            "goal": "delay then collect",
            "scenario": "synthetic",
            "plan": PLAN.model_dump(mode="json"),
            "task": {"scope": scope, "task_id": task},
            **options,
        }
    )


async def test_a_promoted_approval_rule_makes_a_tool_that_never_asked_wait_and_revoking_frees_it(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        task = await new_task(client, task_queue, scope)
        await rules(client, task_queue, scope, ProposeLesson(
            fact="a delay ran unnoticed", question="Who sees delays?", proposal="approve them",
        ), AGENT)  # fmt: skip
        await rules(client, task_queue, scope, ResolveLesson(lesson_id="lesson-1", accept=True,
                                                             reason="yes"))  # fmt: skip
        await rules(client, task_queue, scope, PromoteLesson(
            lesson_id="lesson-1", kind=RuleKind.REQUIRE_APPROVAL_FOR_TOOL, target="delay",
        ))  # fmt: skip
        # the run switches approval of side effects off: the rule is not the run's to relax
        handle = await start_run(client, task_queue, bound(scope, task, approve_side_effects=False))
        wait = await pending_wait(handle, "approve-a")
        assert wait.kind is WaitKind.APPROVAL
        await deliver_update(
            handle, APPROVE_UPDATE, ApprovalRequest(wait_id="approve-a", actor="human:ops")
        )
        result = await result_of(client, handle)
        assert result.status is RunPhase.SUCCEEDED
        loaded = [e for e in result.trace if e.kind is TraceKind.CONTRACT_LOAD]
        assert loaded and loaded[0].data["rules"] == ["rule-1"]

        await rules(client, task_queue, scope, RevokeRule(rule_id="rule-1", reason="noisy"))
        free = await execute_run(client, task_queue, bound(scope, await new_task(
            client, task_queue, scope)))  # fmt: skip
        assert free.status is RunPhase.SUCCEEDED and free.waits == []
        state = await tasks.scope_rules(client, scope)
    assert state.rules[0].revoked and state.lessons[0].rule_id == "rule-1"  # lineage kept


async def test_a_contract_that_keeps_approval_for_people_refuses_a_systems_approval_in_a_run(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    contract = Contract(approval_required_tools=["delay"], allow_system_approval=False)
    async with running_worker(client, task_queue):
        await rules(client, task_queue, scope, SetContract(contract=contract))
        handle = await start_run(client, task_queue, bound(scope, await new_task(
            client, task_queue, scope)))  # fmt: skip
        await pending_wait(handle, "approve-a")
        by_system = await deliver_update(
            handle, APPROVE_UPDATE, ApprovalRequest(wait_id="approve-a", actor=SYSTEM)
        )
        assert not by_system.accepted and "allow_system_approval off" in by_system.reason
        await pending_wait(handle, "approve-a")  # still waiting: nothing changed
        by_person = await deliver_update(
            handle, APPROVE_UPDATE, ApprovalRequest(wait_id="approve-a", actor="human:ops")
        )
        assert by_person.accepted
        assert (await result_of(client, handle)).status is RunPhase.SUCCEEDED


async def test_a_tool_kept_for_task_runs_fails_validation_in_a_run_in_the_scope_without_one(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        await rules(client, task_queue, scope, SetContract(contract=Contract(
            task_required_tools=["delay"])))  # fmt: skip
        request = bound(scope, "x", max_replans=0).model_copy(update={"task": None, "scope": scope})
        result = await execute_run(client, task_queue, request)
        allowed = await execute_run(client, task_queue, bound(scope, await new_task(
            client, task_queue, scope)))  # fmt: skip
    assert result.status is RunPhase.FAILED_VALIDATION
    assert "TASK_REQUIRED" in {f.code for a in result.attempt_history for f in a.failure}
    assert allowed.status is RunPhase.SUCCEEDED


async def test_contract_flags_keep_completion_and_approval_of_a_submission_for_people(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    contract = Contract(allow_system_completion=False, allow_system_approval=False,
                        requires_completion_evidence=False)  # fmt: skip

    async def send(task: str, operation: object, actor: str) -> LedgerReceipt:
        command = TaskCommand.model_validate(
            {"task_id": task, "actor": actor, "operation": operation}
        )
        return await tasks.task_command(client, scope, command)

    async with running_worker(client, task_queue):
        await rules(client, task_queue, scope, SetContract(contract=contract))
        task = await new_task(client, task_queue, scope)
        await send(task, Submit(summary="done"), "system:harness")
        approve = ReviewSubmission(submission_id="sub-1", approve=True)
        with pytest.raises(TaskRefused, match="allow_system_approval off"):
            await send(task, approve, SYSTEM)
        await send(task, approve, HUMAN)
        with pytest.raises(TaskRefused, match="allow_system_completion off"):
            await send(task, Complete(), SYSTEM)
        assert (await tasks.ledger(client, scope, task)).acceptances == []  # nothing changed
        done = await send(task, Complete(), "human:ops")
        state = await tasks.ledger(client, scope, task)
    assert [g.gate for g in done.gates] == ["approved-review"] and done.gates[0].passed
    assert state.task.status is TaskStatus.DONE


async def test_an_unknown_preset_fails_closed_at_creation_and_a_dropped_one_fails_its_gate(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    with_refund = Contract.model_validate({"presets": {"refund": {}}})
    async with running_worker(client, task_queue):
        await rules(client, task_queue, scope, SetContract(contract=with_refund))
        command = GraphCommand(scope=scope, actor=HUMAN,
                               operation=CreateTask(title="t", preset="refnd"))  # fmt: skip
        with pytest.raises(TaskRefused, match="did you mean 'refund'"):
            await tasks.scope_command(client, task_queue, command)
        assert (await tasks.graph(client, scope)).tasks == {}
        task = await new_task(client, task_queue, scope, preset="refund")
        await rules(client, task_queue, scope, SetContract(contract=Contract()))  # dropped
        submit = TaskCommand(task_id=task, actor="system:harness", operation=Submit(summary="s"))
        await tasks.task_command(client, scope, submit)
        complete = TaskCommand(task_id=task, actor="human:ops", operation=Complete())
        receipt = await tasks.task_command(client, scope, complete)
        ledger = await tasks.ledger(client, scope, task)
    assert receipt.gates[0].gate == "preset" and not receipt.gates[0].passed
    assert "no preset 'refund'" in receipt.gates[0].reason
    assert ledger.task.status is TaskStatus.IN_REVIEW


async def test_a_bound_run_is_told_the_rules_in_force_and_history_holds_what_it_was_told(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    contract = Contract(approval_required_tools=["get_population"], required_checks=["x-check"])
    async with running_worker(client, task_queue):
        await rules(client, task_queue, scope, SetContract(contract=contract))
        task = await new_task(client, task_queue, scope)
        request = RunRequest(
            goal="Compare Paris and Tokyo", task=TaskBinding(scope=scope, task_id=task)
        )
        handle = await start_run(client, task_queue, request)
        await pending_wait(handle, "approve-pop_paris")  # a tool that never asked for approval
        history = await handle.fetch_history()
        await handle.cancel()
    scheduled = [
        e.activity_task_scheduled_event_attributes
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    (planning,) = [a for a in scheduled if a.activity_type.name == PLAN_ACTIVITY]
    (sent,) = await client.data_converter.decode(planning.input.payloads, [PlanRequest])
    assert sent.work_notes == [
        "contract: the acceptance check 'x-check' must pass",
        "contract: 'get_population' waits for approval",
    ]
    population = next(t for t in sent.catalog.tools if t.name == "get_population")
    assert population.requires_approval


async def test_the_docs_api_snippet_promotes_a_lesson_and_refuses_what_it_must(
    client: Client, task_queue: str
) -> None:
    from tests.docs_pages import page, python_block_defining

    snippet = python_block_defining(page("tasks"), "require_dispute_check")
    namespace: dict[str, object] = {}
    exec(compile(snippet, "docs/tasks.md", "exec"), namespace)
    promote = namespace["require_dispute_check"]
    assert callable(promote)
    harness = Harness(client, Settings.from_env({"HARNESS_TASK_QUEUE": task_queue}))
    scope = new_scope()
    async with running_worker(client, task_queue):
        await rules(client, task_queue, scope, SetContract(contract=Contract.model_validate(
            {"presets": {"refund": {}}})))  # fmt: skip
        await rules(client, task_queue, scope, ProposeLesson(fact="f", question="q", proposal="p"))
        with pytest.raises(TaskRefused, match="only an ACCEPTED lesson is promoted"):
            await promote(harness, scope, "lesson-1")
        await rules(client, task_queue, scope, ResolveLesson(lesson_id="lesson-1", accept=True,
                                                             reason="r"))  # fmt: skip
        assert await promote(harness, scope, "lesson-1") == "rule-1"
