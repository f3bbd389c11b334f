"""How to answer a wait: the CLI command and the signal payload shown beside each wait."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime

from harness.waits.wait_book import Wait, WaitKind
from harness.waits.wait_hints import harness_command, signal_of

NOW = datetime(2026, 12, 3, tzinfo=UTC)


def wait(kind: WaitKind, **fields: object) -> Wait:
    return Wait.model_validate(
        {"id": "w1", "kind": kind, "prompt": "?", "created_at": NOW, **fields}
    )


def test_an_approval_is_answered_by_harness_approve_with_a_human_actor() -> None:
    approval = wait(WaitKind.APPROVAL)

    assert harness_command("run-1", approval) == (
        "harness approve run-1 w1 --actor human:NAME [--reject]"
    )
    assert signal_of(approval) == (
        "approve",
        {"wait_id": "w1", "decision": "approve", "actor": "human:NAME"},
    )


def test_a_question_is_answered_by_harness_answer_with_its_text() -> None:
    question = wait(WaitKind.USER_INPUT)

    assert harness_command("run-1", question) == "harness answer run-1 w1 'TEXT'"
    assert signal_of(question) == (
        "answer",
        {"wait_id": "w1", "text": "TEXT", "actor": "human:NAME"},
    )


def test_an_operation_and_an_event_are_delivered_by_their_own_names() -> None:
    operation = wait(WaitKind.ASYNC_OPERATION, operation_id="op-7")
    event = wait(WaitKind.EXTERNAL_EVENT, event="deploy.done")

    assert harness_command("run-1", operation) == (
        "harness deliver run-1 --operation op-7 --data JSON"
    )
    assert (
        harness_command("run-1", event) == "harness deliver run-1 --event deploy.done --data JSON"
    )
    for pending in (operation, event):
        assert signal_of(pending) == (
            "deliver",
            {"wait_id": "w1", "data": "DATA", "actor": "system:NAME"},
        )


def test_a_reconcile_shows_both_outcomes_as_payloads_a_shell_passes_whole() -> None:
    example = {"outcome": "succeeded", "result": {"refund_id": "R-1"}}
    reconcile = wait(WaitKind.RECONCILE, example=example)

    done, failed = harness_command("run-1", reconcile).split("\n    -> or, if it did not happen: ")

    assert json.loads(shlex.split(done)[-1]) == example
    assert json.loads(shlex.split(failed)[-1]) == {"outcome": "failed"}
    assert signal_of(reconcile) == (
        "deliver",
        {"wait_id": "w1", "data": example, "actor": "system:NAME"},
    )


def test_a_reconcile_without_an_example_shows_a_succeeded_one() -> None:
    done = harness_command("run-1", wait(WaitKind.RECONCILE)).splitlines()[0]

    assert json.loads(shlex.split(done)[-1]) == {"outcome": "succeeded", "result": "RESULT"}


def test_a_timer_nobody_answers_has_no_command_and_no_signal() -> None:
    timer = wait(WaitKind.TIMER)

    assert harness_command("run-1", timer) == ""
    assert signal_of(timer) is None
