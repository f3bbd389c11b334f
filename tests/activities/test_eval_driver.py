"""Which scripted response the eval gives each wait: the one naming it, else the next unnamed one
of its kind in the order the waits opened, the same on every attempt."""

from __future__ import annotations

from datetime import timedelta

from activities.eval_cases import _responses
from harness.evals.eval_case import EvalCase, ScriptedAnswer, ScriptedApproval
from harness.waits.wait_book import Wait, WaitKind, WaitStatus
from tests.factories import START, wait


def case(*approvals: ScriptedApproval, answers: tuple[ScriptedAnswer, ...] = ()) -> EvalCase:
    return EvalCase.model_validate(
        {
            "id": "c",
            "goal": "g",
            "scenario": "synthetic",
            "options": {"approvals": list(approvals), "answers": list(answers)},
        }
    )


def opened(wait_id: str, kind: WaitKind, minutes: int, *, settled: bool = False) -> Wait:
    made = wait(wait_id, kind).model_copy(update={"created_at": START + timedelta(minutes=minutes)})
    return made.model_copy(update={"status": WaitStatus.DELIVERED}) if settled else made


def test_pending_waits_take_the_unnamed_responses_in_the_order_they_opened() -> None:
    first, second = ScriptedApproval(comment="one"), ScriptedApproval(comment="two")
    waits = [opened("b", WaitKind.APPROVAL, 2), opened("a", WaitKind.APPROVAL, 1)]
    pairs = {w.id: s for w, s in _responses(case(first, second), waits)}
    assert pairs == {"a": first, "b": second}


def test_a_settled_wait_keeps_its_place_so_a_retry_gives_the_next_response() -> None:
    first, second = ScriptedApproval(comment="one"), ScriptedApproval(comment="two")
    waits = [opened("a", WaitKind.APPROVAL, 1, settled=True), opened("b", WaitKind.APPROVAL, 2)]
    assert [(w.id, s) for w, s in _responses(case(first, second), waits)] == [("b", second)]


def test_a_response_that_names_its_wait_goes_to_that_wait_only() -> None:
    named = ScriptedApproval(wait="approve-refund", decision="reject")
    unnamed = ScriptedApproval()
    waits = [
        opened("approve-other", WaitKind.APPROVAL, 1),
        opened("approve-refund", WaitKind.APPROVAL, 2),
    ]
    pairs = {w.id: s for w, s in _responses(case(unnamed, named), waits)}
    assert pairs == {"approve-other": unnamed, "approve-refund": named}


def test_a_wait_with_no_response_left_is_paired_with_none() -> None:
    waits = [
        opened("q1", WaitKind.USER_INPUT, 1, settled=True),
        opened("q2", WaitKind.USER_INPUT, 2),
    ]
    answered = case(answers=(ScriptedAnswer(text="Paris and Tokyo"),))
    assert [(w.id, s) for w, s in _responses(answered, waits)] == [("q2", None)]


def test_waits_the_eval_does_not_script_are_left_to_their_own_senders() -> None:
    waits = [opened("op-1", WaitKind.ASYNC_OPERATION, 1), opened("ev", WaitKind.EXTERNAL_EVENT, 2)]
    assert _responses(case(), waits) == []
