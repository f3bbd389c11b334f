"""Reconciles: what a person is shown to deliver, and what a reconcile delivery must say."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from harness.waits.reconcile import reconcile_example
from harness.waits.wait_book import NEW_RUN_RULES, Delivery, DeliveryRules, WaitKind
from tests.factories import START, wait, wait_book

TEMPLATE: JsonValue = {
    "operation_id": "OPERATION_ID",
    "outcome": {"order_id": "ORDER_ID", "amount_cents": "AMOUNT_CENTS", "status": "paid"},
}


def test_the_example_fills_placeholders_from_the_arguments_and_the_operation() -> None:
    example = reconcile_example(TEMPLATE, {"order_id": "A-1", "amount_cents": 6480}, "pay-7")
    assert example == {
        "outcome": "succeeded",
        "result": {
            "operation_id": "pay-7",
            "outcome": {"order_id": "A-1", "amount_cents": 6480, "status": "paid"},
        },
    }


def test_an_unknown_operation_stays_a_placeholder_for_the_person_to_fill() -> None:
    example = reconcile_example(TEMPLATE, {"order_id": "A-1"}, None)
    result = example["result"]
    assert isinstance(result, dict) and result["operation_id"] == "OPERATION_ID"


def test_a_tool_without_an_example_asks_for_the_whole_result() -> None:
    assert reconcile_example(None, {"x": 1}, None) == {"outcome": "succeeded", "result": "RESULT"}


BEFORE_THE_RECONCILE_RULE = DeliveryRules(
    reconcile_states_outcome=False,
    agents_never_reconcile=False,
    lots_by_sender=False,
    senders_by_identity=False,
)
BEFORE_AGENTS_WERE_KEPT_OUT = DeliveryRules(
    agents_never_reconcile=False, lots_by_sender=False, senders_by_identity=False
)


def reconcile(
    payload: JsonValue, rules: DeliveryRules = NEW_RUN_RULES, actor: str = "human:ops"
) -> tuple[bool, str]:
    book = wait_book(wait("reconcile-pay", WaitKind.RECONCILE))
    delivery = Delivery(
        wait_id="reconcile-pay", kind=WaitKind.RECONCILE, actor=actor, payload=payload
    )
    receipt = book.deliver(delivery, START, rules)
    return receipt.accepted, receipt.reason


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"outcome": "succeeded"}, "must carry the result"),
        ({"outcome": "succeeded", "result": None}, "must carry the result"),
        ({"outcome": "maybe"}, "a reconcile delivers"),
        ("succeeded", "a reconcile delivers"),
        (None, "a reconcile delivers"),
        ({"outcome": "succeeded", "result": "RESULT"}, "still holds the placeholder RESULT"),
        (
            {"outcome": "succeeded", "result": {"operation_id": "OPERATION_ID"}},
            "still holds the placeholder OPERATION_ID",
        ),
    ],
)
def test_a_reconcile_that_does_not_say_what_happened_is_refused(
    payload: JsonValue, reason: str
) -> None:
    accepted, why = reconcile(payload)
    assert not accepted and reason in why


@pytest.mark.parametrize(
    "payload", [{"outcome": "succeeded", "result": {"id": 1}}, {"outcome": "failed"}]
)
def test_a_reconcile_that_says_succeeded_with_the_result_or_failed_is_accepted(
    payload: JsonValue,
) -> None:
    assert reconcile(payload) == (True, "delivered")


def test_runs_started_before_the_reconcile_rule_keep_the_rules_they_started_with() -> None:
    assert reconcile({"outcome": "succeeded"}, BEFORE_THE_RECONCILE_RULE) == (True, "delivered")


@pytest.mark.parametrize(
    "payload", [{"outcome": "succeeded", "result": {"id": 1}}, {"outcome": "failed"}]
)
def test_an_agent_can_never_reconcile_a_side_effect(payload: JsonValue) -> None:
    accepted, why = reconcile(payload, actor="agent:planner")
    assert not accepted
    assert why == "agent:planner is an agent; agents can never reconcile a side effect"


@pytest.mark.parametrize("actor", ["human:ops", "system:payments"])
def test_a_person_or_a_system_may_reconcile(actor: str) -> None:
    assert reconcile({"outcome": "failed"}, actor=actor) == (True, "delivered")


def test_runs_started_before_0_4_keep_their_rules_for_an_agents_reconcile() -> None:
    assert reconcile({"outcome": "failed"}, BEFORE_AGENTS_WERE_KEPT_OUT, "agent:planner") == (
        True,
        "delivered",
    )
