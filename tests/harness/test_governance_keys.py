"""Signed governance acts: the rules of who may act in a scope that has actor keys, with real
Ed25519 (harness.governance.governance_keys)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TypeVar

import pytest
from pydantic import BaseModel, ValidationError

from harness.governance.governance_keys import (
    MAX_KEYS,
    deciding_act,
    governance_message,
    governance_problem,
    key_change_problem,
)
from harness.governance.scope_rules import (
    ProposeLesson,
    RevokeRule,
    RulesCommand,
    ScopeRules,
    ScopeRulesState,
    SetContract,
    SetKeys,
)
from harness.governance.state_size import json_bytes
from harness.governance.task_commands import (
    Complete,
    RecordEvidence,
    ReviewSubmission,
    SetStatus,
    Submit,
    TaskCommand,
)
from harness.governance.work import EvidenceKind, TaskStatus
from infra.signing import new_private_key, public_key, sign, verify

OPS = new_private_key()
MALLORY = new_private_key()
KEYS = {"human:ops": public_key(OPS), "system:ci": public_key(new_private_key())}
SCOPE = "shop"
Command = TypeVar("Command", bound=BaseModel)


def signed(command: Command, key: str = OPS, task_id: str | None = "task-1") -> Command:
    signature = sign(key, governance_message(SCOPE, task_id, command))
    return command.model_copy(update={"signature": signature})


def task_command(actor: str, operation: object, key: str | None = "k-1") -> TaskCommand:
    return TaskCommand.model_validate(
        {"task_id": "task-1", "actor": actor, "operation": operation, "idempotency_key": key}
    )


def problem(
    command: BaseModel, keys: dict[str, str] = KEYS, task: str | None = "task-1"
) -> str | None:
    return governance_problem(SCOPE, task, command, keys, verify)


REVIEW = task_command("human:ops", ReviewSubmission(submission_id="sub-1", approve=True))
EVIDENCE = task_command(
    "agent:run-1", RecordEvidence(kind=EvidenceKind.FILE, summary="looked at it")
)


def test_an_unkeyed_scope_takes_every_command_as_before() -> None:
    assert problem(REVIEW, keys={}) is None
    assert problem(task_command("human:anyone", Complete()), keys={}) is None


def test_a_review_signed_by_its_keyed_actor_is_taken() -> None:
    assert problem(signed(REVIEW)) is None


def test_an_unsigned_review_by_a_keyed_actor_is_refused() -> None:
    assert "must carry its signature" in str(problem(REVIEW))


def test_another_spelling_of_a_keyed_actor_is_that_actor() -> None:
    spelt = REVIEW.model_copy(update={"actor": "Human: OPS"})
    assert "must carry its signature" in str(problem(spelt))
    assert problem(signed(spelt)) is None


@pytest.mark.parametrize(
    "forged",
    [
        signed(REVIEW, MALLORY),
        signed(REVIEW).model_copy(update={"actor": "system:ci"}),
        signed(REVIEW, task_id="task-2"),
        signed(REVIEW).model_copy(
            update={"operation": ReviewSubmission(submission_id="sub-1", approve=False)}
        ),
        signed(REVIEW).model_copy(update={"signature": "not base64!"}),
    ],
    ids=["another key", "another actor", "another task", "another verdict", "garbage"],
)
def test_a_signature_that_is_not_the_actors_for_this_command_is_refused(
    forged: TaskCommand,
) -> None:
    assert problem(forged) is not None


def test_a_signature_for_a_task_of_another_scope_is_refused() -> None:
    elsewhere = REVIEW.model_copy(
        update={"signature": sign(OPS, governance_message("other", "task-1", REVIEW))}
    )
    assert "is not human:ops's" in str(problem(elsewhere))


def test_a_signed_command_without_an_idempotency_key_is_refused() -> None:
    keyless = signed(REVIEW.model_copy(update={"idempotency_key": None}))
    assert "idempotency key" in str(problem(keyless))


@pytest.mark.parametrize(
    "operation",
    [
        ReviewSubmission(submission_id="sub-1", approve=True),
        Complete(),
        SetStatus(status=TaskStatus.CANCELLED),
    ],
)
def test_deciding_acts_by_an_unkeyed_actor_are_refused_in_a_keyed_scope(
    operation: object,
) -> None:
    command = task_command("human:mallory", operation)
    assert "has no key in scope 'shop'" in str(problem(command))


def test_unkeyed_actors_still_record_and_submit_in_a_keyed_scope() -> None:
    assert problem(EVIDENCE) is None
    assert problem(task_command("system:harness", Submit(summary="done"))) is None
    assert problem(task_command("agent:run-1", SetStatus(status=TaskStatus.BLOCKED))) is None


def test_the_acts_that_decide_are_named() -> None:
    assert deciding_act(Complete()) == "a completion"
    assert deciding_act(SetStatus(status=TaskStatus.CANCELLED)) == "a cancellation"
    assert deciding_act(SetStatus(status=TaskStatus.BLOCKED)) is None
    assert deciding_act(RevokeRule(rule_id="rule-1", reason="wrong")) == "a revocation"
    assert deciding_act(SetKeys(keys={})) == "a key change"
    assert deciding_act(ProposeLesson(fact="f", question="q", proposal="p")) is None


def rules_command(actor: str, operation: object, key: str | None = "r-1") -> RulesCommand:
    return RulesCommand.model_validate(
        {"scope": SCOPE, "actor": actor, "operation": operation, "idempotency_key": key}
    )


def test_the_first_keys_are_signed_with_a_key_being_set() -> None:
    first = rules_command("human:ops", SetKeys(keys={"Human:Ops": public_key(OPS)}))
    assert problem(signed(first, task_id=None), keys={}, task=None) is None
    assert "must carry its signature" in str(problem(first, keys={}, task=None))
    assert problem(signed(first, MALLORY, task_id=None), keys={}, task=None) is not None


def test_the_first_keys_are_set_by_a_person_among_them() -> None:
    others = {"human:alice": public_key(new_private_key())}
    assert "must be among them" in str(key_change_problem({}, "human:ops", others))
    assert "only a person" in str(key_change_problem({}, "system:ci", KEYS))
    assert "only a person" in str(key_change_problem(KEYS, "agent:run-1", KEYS))
    assert key_change_problem({}, "human:ops", KEYS) is None


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        ({"agent:run-1": public_key(OPS), "human:ops": public_key(OPS)}, "never keyed"),
        ({"system:harness": public_key(OPS), "human:ops": public_key(OPS)}, "worker's own"),
        ({"human:ops": "c2hvcnQ="}, "not an Ed25519 public key"),
        ({"human:ops": public_key(OPS), "HUMAN:OPS": public_key(OPS)}, "name one actor"),
        ({"system:ci": public_key(OPS)}, "no person"),
        ({"nobody": public_key(OPS)}, "must look like"),
    ],
)
def test_a_key_map_that_cannot_work_is_refused(keys: dict[str, str], said: str) -> None:
    assert said in str(key_change_problem({"human:ops": public_key(OPS)}, "human:ops", keys))


def test_later_keys_are_changed_only_by_a_keyed_person_who_signs() -> None:
    change = rules_command("human:mallory", SetKeys(keys={"human:mallory": public_key(MALLORY)}))
    assert "has no key in scope" in str(problem(signed(change, MALLORY, None), task=None))
    by_ops = change.model_copy(update={"actor": "human:ops"})
    assert problem(signed(by_ops, task_id=None), task=None) is None


def test_set_keys_stores_each_actor_as_its_one_identity() -> None:
    rules = ScopeRules(SCOPE, ScopeRulesState())
    command = rules_command("Human:Ops", SetKeys(keys={"Human: Ops": public_key(OPS)}))
    assert rules.check(command) is None
    receipt = rules.apply(command, datetime(2026, 12, 3, tzinfo=UTC))
    assert receipt.accepted, receipt.reason
    assert rules.state.actor_keys == {"human:ops": public_key(OPS)}
    assert rules.state.actor_keys_set_by == "Human:Ops"
    assert rules.size == json_bytes(rules.state)


def test_a_scope_keys_at_most_fifty_actors() -> None:
    many = {f"human:p{n}": public_key(OPS) for n in range(MAX_KEYS + 1)}
    with pytest.raises(ValidationError):
        SetKeys(keys=many)


def test_a_signature_is_not_part_of_what_an_idempotency_key_stands_for() -> None:
    assert signed(REVIEW).fingerprint() == REVIEW.fingerprint()
    contract = rules_command("human:ops", SetContract.model_validate({"contract": {}}))
    assert signed(contract, task_id=None).fingerprint() == contract.fingerprint()
