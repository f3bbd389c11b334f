"""Governance acts on the dev server where a scope has actor keys: reviews, completions,
cancellations and rules are by keyed actors who sign them (harness.governance.governance_keys); a
scope
without keys takes what it took before."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from durable_harness import TaskRefused
from durable_harness._client import tasks
from durable_harness._client.signed_actors import sign_command
from harness.governance.scope_rules import RulesCommand, SetContract, SetKeys
from harness.governance.task_commands import (
    Complete,
    LedgerReceipt,
    RecordEvidence,
    ReviewSubmission,
    SetStatus,
    Submit,
    TaskCommand,
    TaskOperation,
)
from harness.governance.task_graph import CreateTask, GraphCommand
from harness.governance.work import EvidenceKind, TaskStatus
from infra.signing import new_private_key, public_key
from tests.starter.test_cli import harness
from tests.support import running_worker

pytestmark = pytest.mark.requires_local_server("tasks are listed by the HarnessTask* attributes")

OPS = new_private_key()
LEAD = new_private_key()
MALLORY = new_private_key()


def new_scope() -> str:
    return f"gov-{uuid.uuid4().hex[:8]}"


async def set_keys(
    client: Client, task_queue: str, scope: str, actor: str, private: str, keys: dict[str, str]
) -> LedgerReceipt:
    command = RulesCommand(scope=scope, actor=actor, operation=SetKeys(keys=keys))
    return await tasks.rules_command(client, task_queue, sign_command(command, scope, private))


async def new_task(client: Client, task_queue: str, scope: str) -> str:
    created = await tasks.scope_command(
        client,
        task_queue,
        GraphCommand(scope=scope, actor="system:intake", operation=CreateTask(title="refund")),
    )
    assert created.accepted and created.id, created.reason
    return created.id


async def act(
    client: Client,
    scope: str,
    task_id: str,
    actor: str,
    operation: TaskOperation,
    private: str | None = None,
) -> LedgerReceipt:
    command = TaskCommand(task_id=task_id, actor=actor, operation=operation)
    if private is not None:
        command = sign_command(command, scope, private)
    return await tasks.task_command(client, scope, command)


async def submitted(client: Client, scope: str, task_id: str) -> str:
    await act(client, scope, task_id, "system:harness", evidence())
    receipt = await act(
        client, scope, task_id, "system:harness", Submit(summary="done", evidence_ids=["ev-1"])
    )
    assert receipt.accepted and receipt.id, receipt.reason
    return receipt.id


def evidence() -> RecordEvidence:
    return RecordEvidence(kind=EvidenceKind.EXTERNAL, summary="refund issued")


KEYS = {"human:ops": public_key(OPS), "human:lead": public_key(LEAD)}


async def test_unsigned_review_by_a_keyed_actor_is_refused(client: Client, task_queue: str) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        keyed = await set_keys(client, task_queue, scope, "human:ops", OPS, KEYS)
        task_id = await new_task(client, task_queue, scope)
        submission = await submitted(client, scope, task_id)
        review = ReviewSubmission(submission_id=submission, approve=True)
        with pytest.raises(TaskRefused) as unsigned:
            await act(client, scope, task_id, "Human:Lead", review)
        with pytest.raises(TaskRefused) as unkeyed:
            await act(client, scope, task_id, "human:mallory", review, MALLORY)
        signed = await act(client, scope, task_id, "human:lead", review, LEAD)
        ledger = await tasks.ledger(client, scope, task_id)
    assert keyed.accepted, keyed.reason
    assert "human:lead has a key in scope" in str(unsigned.value)
    assert "human:mallory has no key in scope" in str(unkeyed.value)
    assert "a review must be signed by a keyed actor" in str(unkeyed.value)
    assert signed.accepted, signed.reason
    assert [r.reviewed_by for r in ledger.reviews] == ["human:lead"]


async def test_a_forged_signature_on_complete_is_refused(client: Client, task_queue: str) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        await set_keys(client, task_queue, scope, "human:ops", OPS, KEYS)
        task_id = await new_task(client, task_queue, scope)
        submission = await submitted(client, scope, task_id)
        review = ReviewSubmission(submission_id=submission, approve=True)
        await act(client, scope, task_id, "human:lead", review, LEAD)
        with pytest.raises(TaskRefused) as forged:
            await act(client, scope, task_id, "human:ops", Complete(), MALLORY)
        before = await tasks.ledger(client, scope, task_id)
        done = await act(client, scope, task_id, "human:ops", Complete(), OPS)
        after = await tasks.ledger(client, scope, task_id)
    assert "the signature is not human:ops's" in str(forged.value)
    assert before.task.status is TaskStatus.IN_REVIEW and not before.acceptances
    assert done.accepted, done.reason
    assert after.task.status is TaskStatus.DONE


async def test_the_first_key_of_a_scope_is_set_by_a_person_and_then_only_by_a_keyed_one(
    client: Client, task_queue: str
) -> None:
    scope = new_scope()
    mallory = {"human:mallory": public_key(MALLORY)}
    async with running_worker(client, task_queue):
        with pytest.raises(TaskRefused) as by_a_system:
            await set_keys(client, task_queue, scope, "system:ci", OPS, KEYS)
        with pytest.raises(TaskRefused) as without_possession:
            await set_keys(client, task_queue, scope, "human:ops", MALLORY, KEYS)
        first = await set_keys(client, task_queue, scope, "human:ops", OPS, KEYS)
        with pytest.raises(TaskRefused) as taken_over:
            await set_keys(client, task_queue, scope, "human:mallory", MALLORY, mallory)
        rotated = await set_keys(
            client, task_queue, scope, "human:lead", LEAD, {"human:lead": public_key(LEAD)}
        )
        with pytest.raises(TaskRefused) as dropped:
            await set_keys(client, task_queue, scope, "human:ops", OPS, KEYS)
        state = await tasks.scope_rules(client, scope)
    assert "only a person sets a scope's keys" in str(by_a_system.value)
    assert "the signature is not human:ops's" in str(without_possession.value)
    assert first.accepted, first.reason
    assert "human:mallory has no key in scope" in str(taken_over.value)
    assert rotated.accepted, rotated.reason
    assert "human:ops has no key in scope" in str(dropped.value)
    assert state.actor_keys == {"human:lead": public_key(LEAD)}


async def test_unkeyed_scopes_accept_acts_as_before(client: Client, task_queue: str) -> None:
    scope = new_scope()
    async with running_worker(client, task_queue):
        task_id = await new_task(client, task_queue, scope)
        submission = await submitted(client, scope, task_id)
        review = ReviewSubmission(submission_id=submission, approve=True)
        reviewed = await act(client, scope, task_id, "human:lead", review)
        done = await act(client, scope, task_id, "human:ops", Complete())
        contract = RulesCommand(
            scope=scope, actor="human:ops", operation=SetContract.model_validate({"contract": {}})
        )
        contract_set = await tasks.rules_command(client, task_queue, contract)
    assert reviewed.accepted and done.accepted and contract_set.accepted


async def test_a_task_of_a_scope_keyed_later_refuses_an_unsigned_cancel(
    client: Client, task_queue: str
) -> None:
    """The task existed before its scope had keys: the scope tells it, and it reads them."""
    scope = new_scope()
    cancel = SetStatus(status=TaskStatus.CANCELLED, reason="not needed")
    async with running_worker(client, task_queue):
        task_id = await new_task(client, task_queue, scope)
        await set_keys(client, task_queue, scope, "human:ops", OPS, KEYS)
        for _ in range(300):  # the task reads its keys after the scope's signal
            try:
                await act(client, scope, task_id, "human:ops", evidence())
            except TaskRefused:
                break
            await asyncio.sleep(0.1)
        with pytest.raises(TaskRefused) as refused:
            await act(client, scope, task_id, "human:ops", cancel)
        with pytest.raises(TaskRefused) as by_an_unkeyed_person:
            await act(client, scope, task_id, "human:alice", cancel)
        cancelled = await act(client, scope, task_id, "human:ops", cancel, OPS)
    assert "human:ops has a key in scope" in str(refused.value)
    assert "a cancellation must be signed by a keyed actor" in str(by_an_unkeyed_person.value)
    assert cancelled.accepted, cancelled.reason


async def test_the_cli_signs_governance_acts_with_a_signing_key(
    client: Client, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scope = new_scope()
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    monkeypatch.delenv("HARNESS_ACTOR_KEY_FILE", raising=False)
    key_file = tmp_path / "ops.key"
    key_file.write_text(OPS + "\n")
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps({"human:ops": public_key(OPS)}))

    async def cli(*args: str) -> tuple[int, str, str]:
        return await harness(*args, "--scope", scope, client=client, task_queue=task_queue)

    async with running_worker(client, task_queue):
        keyed = await cli(
            "keys", "set", "--keys", str(keys_file), "--actor", "human:ops",
            "--signing-key", str(key_file),
        )  # fmt: skip
        created = await cli("task", "create", "refund", "--actor", "system:intake")
        unsigned = await cli("task", "cancel", "task-1", "--actor", "human:ops")
        signed = await cli(
            "task", "cancel", "task-1", "--actor", "human:ops", "--signing-key", str(key_file)
        )
        shown = await cli("keys", "show", "--json")
    assert keyed[0] == 0, keyed
    assert created[0] == 0, created
    assert unsigned[0] == 2 and unsigned[2].count("\n") == 1, unsigned
    assert "human:ops has a key in scope" in unsigned[2]
    assert signed[0] == 0 and "task-1: task is CANCELLED" in signed[1], signed
    assert json.loads(shown[1]) == {"human:ops": public_key(OPS)}
