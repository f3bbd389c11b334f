"""Delivery requests: what a signal or update carries turns into one Delivery for the WaitBook."""

from __future__ import annotations

import pytest

from harness.waits.deliveries import AnswerRequest, ApprovalRequest, DeliverRequest
from harness.waits.wait_book import Decision, Delivery, Wait, WaitKind
from tests.factories import START, wait, wait_book


def test_an_approval_request_approves_unless_told_otherwise() -> None:
    assert ApprovalRequest(wait_id="approve-change", actor="human:alice").delivery() == Delivery(
        wait_id="approve-change",
        kind=WaitKind.APPROVAL,
        actor="human:alice",
        decision=Decision.APPROVE,
    )


def test_a_rejection_carries_its_decision_and_comment() -> None:
    request = ApprovalRequest(
        wait_id="approve-change", decision=Decision.REJECT, actor="human:bob", comment="not today"
    )

    delivery = request.delivery()

    assert delivery.decision is Decision.REJECT
    assert delivery.comment == "not today"


def test_an_answer_request_is_user_input_from_the_user_unless_an_actor_is_given() -> None:
    assert AnswerRequest(wait_id="ask-1", text="Paris").delivery() == Delivery(
        wait_id="ask-1", kind=WaitKind.USER_INPUT, actor="human:user", payload="Paris"
    )
    assert AnswerRequest(wait_id="ask-1", text="Paris", actor="human:al").delivery().actor == (
        "human:al"
    )


@pytest.mark.parametrize(
    ("opened", "request_"),
    [
        pytest.param(
            wait("reconcile-change", WaitKind.RECONCILE),
            DeliverRequest(
                wait_id="reconcile-change",
                data={"outcome": "succeeded", "result": {"changed": True}},
            ),
            id="RECONCILE-by-wait-id",
        ),
        pytest.param(
            wait("event-signal", WaitKind.EXTERNAL_EVENT, event="deploy.done"),
            DeliverRequest(event="deploy.done", data={"version": "1.2"}),
            id="EXTERNAL_EVENT-by-event",
        ),
        pytest.param(
            wait("op-job", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"),
            DeliverRequest(operation_id="run-1:job:x", data={"rows": 3}),
            id="ASYNC_OPERATION-by-operation-id",
        ),
    ],
)
def test_a_deliver_request_takes_the_kind_of_the_wait_it_targets(
    opened: Wait, request_: DeliverRequest
) -> None:
    book = wait_book(opened)

    delivery = request_.delivery(book)

    assert delivery.kind is opened.kind
    assert delivery.payload == request_.data
    assert delivery.actor == "system:external"
    assert book.deliver(delivery, START).accepted


def test_a_deliver_request_for_a_target_not_open_yet_is_an_async_operation_result() -> None:
    delivery = DeliverRequest(event="deploy.done").delivery(wait_book())

    assert delivery.kind is WaitKind.ASYNC_OPERATION
    assert delivery.event == "deploy.done"


@pytest.mark.parametrize("kind", [WaitKind.APPROVAL, WaitKind.USER_INPUT])
def test_deliver_cannot_stand_in_for_an_approval_or_an_answer(kind: WaitKind) -> None:
    book = wait_book(wait("w", kind))

    delivery = DeliverRequest(wait_id="w", data="approve").delivery(book)

    assert delivery.kind is WaitKind.ASYNC_OPERATION
    receipt = book.deliver(delivery, START)
    assert not receipt.accepted
    assert receipt.reason == f"wait 'w' is {kind.value}, not ASYNC_OPERATION"
