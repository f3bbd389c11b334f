"""Governance acts: who may do what to a task is decided by identity and kind, not by how a
name is spelt (F6, F11 of the reliability round 3). Pure rules, one table each."""

from __future__ import annotations

import pytest

from harness.core.actors import actor_identity, same_actor
from harness.governance.task_commands import (
    InvalidateFact,
    RecordFact,
    ReviewSubmission,
    SetStatus,
    Submit,
    TaskCommand,
    TaskOperation,
)
from harness.governance.task_ledger import TaskLedger, TaskLedgerState
from harness.governance.work import TaskRecord, TaskStatus
from harness.waits.deliveries import CancelRequest
from harness.waits.signatures import signature_problem
from infra.signing import new_private_key, public_key, verify
from tests.factories import START

AGENT, ALICE, OPS = "agent:run-7", "human:alice", "human:ops"


def ledger(status: TaskStatus = TaskStatus.ACTIVE) -> TaskLedger:
    task = TaskRecord(
        id="task-1", scope="shop-A", title="refund", status=status, created_by=OPS, created_at=START
    )
    return TaskLedger(TaskLedgerState(task=task))


def command(operation: TaskOperation, actor: str) -> TaskCommand:
    return TaskCommand(task_id="task-1", actor=actor, operation=operation)


def applied(book: TaskLedger, operation: TaskOperation, actor: str) -> str:
    receipt = book.apply(command(operation, actor), START)
    assert receipt.accepted, receipt.reason
    assert receipt.id is not None
    return receipt.id


@pytest.mark.parametrize(
    "spelling",
    [
        "human:alice",
        "human:Alice",
        "HUMAN:ALICE",
        " Human : alice ",
        "\uff48\uff55\uff4d\uff41\uff4e\uff1a\uff41\uff4c\uff49\uff43\uff45",  # fullwidth (NFKC)
        "human:ali\u200bce",  # a zero-width space
    ],
)
def test_every_spelling_of_one_person_is_one_identity(spelling: str) -> None:
    assert actor_identity(spelling) == "human:alice"
    assert same_actor(spelling, ALICE)


@pytest.mark.parametrize(
    ("first", "second"),
    [("human:alice", "human:alicia"), ("human:alice", "system:alice"), ("agent:a", "human:a")],
)
def test_different_actors_stay_different(first: str, second: str) -> None:
    assert not same_actor(first, second)


def test_agent_cannot_submit_a_task() -> None:
    problem = ledger().check(command(Submit(summary="done"), AGENT))

    assert problem is not None and "an agent can never submit" in problem


@pytest.mark.parametrize(
    ("recorder", "refused"),
    [(ALICE, True), ("system:etl", True), (AGENT, False), ("agent:other", False)],
)
def test_agent_cannot_invalidate_a_persons_fact(recorder: str, refused: bool) -> None:
    book = ledger()
    fact = applied(
        book, RecordFact(statement="eligible", source="policy", confidence=0.9), recorder
    )

    problem = book.check(command(InvalidateFact(fact_id=fact, reason="wrong"), AGENT))

    assert (problem is not None) is refused, problem
    if refused:
        assert f"recorded by {recorder}" in str(problem)


def test_a_person_may_still_invalidate_an_agents_fact() -> None:
    book = ledger()
    fact = applied(book, RecordFact(statement="eligible", source="x", confidence=0.5), AGENT)

    assert book.check(command(InvalidateFact(fact_id=fact, reason="wrong"), ALICE)) is None


@pytest.mark.parametrize(
    ("blocked_by", "lifter", "refused"),
    [
        (ALICE, AGENT, True),
        ("system:ops-bot", AGENT, True),
        (AGENT, AGENT, False),
        ("agent:another-run", AGENT, False),
        (ALICE, OPS, False),
    ],
)
def test_management_tool_cannot_lift_a_persons_block(
    blocked_by: str, lifter: str, refused: bool
) -> None:
    book = ledger()
    applied(book, SetStatus(status=TaskStatus.BLOCKED, reason="legal hold"), blocked_by)

    problem = book.check(command(SetStatus(status=TaskStatus.ACTIVE), lifter))

    assert (problem is not None) is refused, problem
    if refused:
        assert f"BLOCKED by {blocked_by}" in str(problem)


def test_an_agent_may_still_block_and_unblock_its_own_task() -> None:
    book = ledger()
    applied(book, SetStatus(status=TaskStatus.BLOCKED, reason="waiting"), AGENT)

    assert book.check(command(SetStatus(status=TaskStatus.ACTIVE), AGENT)) is None


@pytest.mark.parametrize(
    "reviewer",
    [
        "human:Alice",
        "HUMAN:ALICE",
        "human:ali\u200bce",
        "\uff48\uff55\uff4d\uff41\uff4e\uff1aalice",
    ],
)
def test_two_spellings_of_one_person_cannot_approve_their_own_submission(reviewer: str) -> None:
    book = ledger()
    submission = applied(book, Submit(summary="refunded"), ALICE)

    approve = ReviewSubmission(submission_id=submission, approve=True)
    problem = book.check(command(approve, reviewer))

    assert problem is not None
    assert "nobody reviews their own work" in problem or "must look like" in problem


def test_the_gateway_before_0_11_is_kept_for_recorded_histories() -> None:
    """A task's workflow re-checks in its handler with `legacy=True` where its history began
    before 0.10, so what it decided then it decides again on replay."""
    book = ledger()
    submission = applied(book, Submit(summary="refunded"), ALICE)
    approve = command(ReviewSubmission(submission_id=submission, approve=True), "human:Alice")

    assert book.check(approve, legacy=True) is None
    assert book.check(approve) is not None


@pytest.mark.parametrize(
    "spelling",
    [
        "Human:Ops",
        "HUMAN:OPS",
        "human:ops\u200b",
        "\uff48\uff55\uff4d\uff41\uff4e\uff1a\uff4f\uff50\uff53",
    ],
)
def test_unsigned_cancel_with_another_spelling_of_a_keyed_actor_is_refused(spelling: str) -> None:
    keys = {OPS: public_key(new_private_key())}
    cancel = CancelRequest(reason="stop", actor=spelling)

    problem = signature_problem("run-1", cancel, None, keys, verify)

    assert problem is not None and "must carry its signature" in problem
