"""Fencing of task writes: a write of a superseded writer (an older epoch of its holder) is
refused with the reason and changes nothing; equal and newer epochs write; writes without a
fence are as before, and so is every payload that carries none."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from harness.governance.fencing import MAX_FENCED_HOLDERS, mark_written, stale_writer_problem
from harness.governance.state_size import json_bytes
from harness.governance.task_commands import (
    RecordFact,
    SetStatus,
    TaskCommand,
    TaskOperation,
)
from harness.governance.task_ledger import TaskLedger, TaskLedgerState
from harness.governance.work import TaskBinding, TaskRecord, TaskStatus, WriterFence
from tests.factories import START

AGENT, HUMAN = "agent:run-1", "human:ops"
HOLDER = "session:s-1"


def fact(n: int) -> RecordFact:
    return RecordFact(statement=f"finding {n}", source="search", confidence=0.5)


def fence(epoch: int, holder: str = HOLDER) -> WriterFence:
    return WriterFence(holder=holder, epoch=epoch)


def ledger() -> TaskLedger:
    task = TaskRecord(id="task-1", scope="shop-A", title="t", created_by=HUMAN, created_at=START)
    return TaskLedger(TaskLedgerState(task=task))


def write(
    operation: TaskOperation,
    by: WriterFence | None = None,
    key: str | None = None,
    actor: str = AGENT,
) -> TaskCommand:
    return TaskCommand(
        task_id="task-1", actor=actor, operation=operation, idempotency_key=key, fence=by
    )


@pytest.mark.parametrize(
    ("marks", "epoch", "stale"),
    [
        ({}, 1, False),  # a holder's first write
        ({HOLDER: 3}, 4, False),  # a newer slice
        ({HOLDER: 3}, 3, False),  # the same slice, again
        ({HOLDER: 3}, 2, True),  # a slice the holder has moved on from
        ({HOLDER: 3}, 1, True),
        ({"session:other": 9}, 1, False),  # another holder's marks are its own
    ],
)
def test_a_write_is_stale_only_when_its_holder_wrote_with_a_newer_epoch(
    marks: dict[str, int], epoch: int, stale: bool
) -> None:
    assert (stale_writer_problem(marks, fence(epoch), "task-1") is not None) is stale


def test_a_write_without_a_fence_is_never_stale() -> None:
    assert stale_writer_problem({HOLDER: 3}, None, "task-1") is None


def test_the_refusal_says_who_is_stale_what_wrote_since_and_that_nothing_changed() -> None:
    assert stale_writer_problem({HOLDER: 3}, fence(2), "task-1") == (
        "stale writer: session:s-1 epoch 2 is older than epoch 3, which has written to task "
        "task-1 since; nothing was changed"
    )


def test_a_mark_rises_never_falls_and_its_holder_becomes_the_last_to_write() -> None:
    marks = {HOLDER: 2, "session:s-2": 1}
    mark_written(marks, fence(3))
    assert marks == {"session:s-2": 1, HOLDER: 3} and list(marks)[-1] == HOLDER
    mark_written(marks, fence(1))
    assert marks[HOLDER] == 3


def test_a_task_keeps_marks_for_the_holders_that_wrote_last_and_forgets_the_oldest() -> None:
    marks: dict[str, int] = {}
    for n in range(MAX_FENCED_HOLDERS):
        mark_written(marks, fence(5, f"session:s-{n}"))
    mark_written(marks, fence(5, "session:s-0"))  # the first wrote again: s-1 is now oldest
    mark_written(marks, fence(1, "session:new"))
    assert len(marks) == MAX_FENCED_HOLDERS
    assert "session:s-1" not in marks
    assert {"session:s-0", "session:s-2", "session:new"} <= set(marks)


def test_a_fence_names_its_holder_within_bounds_and_counts_epochs_from_one() -> None:
    for bad in ({"holder": "", "epoch": 1}, {"holder": "h" * 201, "epoch": 1}):
        with pytest.raises(ValidationError):
            WriterFence.model_validate(bad)
    with pytest.raises(ValidationError):
        WriterFence(holder=HOLDER, epoch=0)


def test_the_gateway_refuses_an_older_epoch_after_a_newer_one_and_changes_nothing() -> None:
    book = ledger()
    assert book.apply(write(fact(1), fence(3)), START).accepted
    before = book.state.model_copy(deep=True)
    receipt = book.apply(write(fact(2), fence(2)), START)
    assert not receipt.accepted
    assert receipt.reason.startswith("stale writer: session:s-1 epoch 2 is older than epoch 3")
    assert book.state == before
    assert book.size == json_bytes(book.state)


def test_the_same_epoch_writes_again_and_a_newer_one_raises_the_mark() -> None:
    book = ledger()
    for n, epoch in enumerate((1, 1, 2, 2, 5)):
        assert book.apply(write(fact(n), fence(epoch)), START).accepted
    assert book.state.writer_epochs == {HOLDER: 5}
    assert book.check(write(fact(9), fence(4))) is not None


def test_a_stale_write_is_refused_whoever_writes_and_whatever_it_changes() -> None:
    book = ledger()
    book.apply(write(fact(1), fence(3)), START)
    block = write(SetStatus(status=TaskStatus.CANCELLED), fence(2), actor=HUMAN)
    assert (book.check(block) or "").startswith("stale writer")


def test_writes_without_a_fence_and_of_other_holders_are_not_held_back() -> None:
    book = ledger()
    book.apply(write(fact(1), fence(3)), START)
    assert book.apply(write(fact(2)), START).accepted
    assert book.apply(write(fact(3), fence(1, "session:s-2")), START).accepted
    assert book.state.writer_epochs == {HOLDER: 3, "session:s-2": 1}


def test_a_stale_writer_resending_a_write_already_applied_is_told_it_was_a_duplicate() -> None:
    """Its key was applied (by it, before it was superseded): nothing changes either way."""
    book = ledger()
    first = book.apply(write(fact(1), fence(2), key="k1"), START)
    book.apply(write(fact(2), fence(3)), START)
    again = book.apply(write(fact(1), fence(2), key="k1"), START)
    assert (again.accepted, again.duplicate, again.id) == (True, True, first.id)
    assert book.state.writer_epochs == {HOLDER: 3}


def test_the_same_command_sent_again_by_a_later_epoch_is_the_same_content_under_its_key() -> None:
    later = write(fact(1), fence(3), "k").fingerprint()
    assert write(fact(1), fence(2), "k").fingerprint() == later
    assert write(fact(1), None, "k").fingerprint() == later


def test_a_history_from_before_fencing_applies_a_fenced_write_and_keeps_no_mark() -> None:
    book = ledger()
    assert book.apply(write(fact(1), fence(3)), START, checked=True, fenced=False).accepted
    assert book.state.writer_epochs == {}
    assert book.apply(write(fact(2), fence(1)), START).accepted


def test_the_marks_travel_with_the_ledger_through_continue_as_new() -> None:
    book = ledger()
    book.apply(write(fact(1), fence(3)), START)
    carried = TaskLedger(TaskLedgerState.model_validate_json(book.state.model_dump_json()))
    assert carried.state.writer_epochs == {HOLDER: 3}
    assert carried.check(write(fact(2), fence(2))) is not None


def test_the_size_stays_exact_as_fenced_writes_add_and_raise_marks() -> None:
    book = ledger()
    assert book.size == json_bytes(book.state)  # measured before any mark
    for n, (holder, epoch) in enumerate([("a", 1), ("b", 1), ("a", 2), ("a", 10), ("b", 1)]):
        command = write(fact(n), fence(epoch, f"session:{holder}"))
        before, reckoned = book.size, book.growth(command)
        assert book.apply(command, START).accepted
        assert book.size == json_bytes(book.state)
        assert book.size - before <= reckoned


def test_payloads_without_a_fence_are_the_same_json_as_before_fencing() -> None:
    book = ledger()
    book.apply(write(fact(1)), START)
    assert "writer_epochs" not in json.loads(book.state.model_dump_json())
    assert "fence" not in json.loads(write(fact(1)).model_dump_json())
    binding = TaskBinding(scope="shop-A", task_id="task-1")
    assert binding.model_dump_json() == '{"scope":"shop-A","task_id":"task-1"}'
    fenced = binding.model_copy(update={"fence": fence(2)})
    assert TaskBinding.model_validate_json(fenced.model_dump_json()) == fenced
