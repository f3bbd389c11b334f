"""WaitBook: each wait takes one delivery, and every delivery is held to the wait's rules."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pydantic import JsonValue

from harness.waits.wait_book import (
    LATE_EXCERPT_CHARS,
    MAX_PARKED,
    MAX_PARKED_PER_KIND,
    MAX_PARKED_PER_SENDER,
    PARKED_FOR,
    Decision,
    Delivery,
    DeliveryReceipt,
    DeliveryRules,
    WaitBook,
    WaitKind,
    WaitStatus,
    late_excerpt,
)
from tests.factories import START, wait, wait_book

LATER = START + timedelta(minutes=5)
ACCEPTED_FORMS = "human:NAME, system:NAME or agent:NAME"
FIRST_RULES = DeliveryRules(
    bounded_parking=False,
    reconcile_states_outcome=False,
    agents_never_reconcile=False,
    lots_by_sender=False,
    senders_by_identity=False,
)
"""The rules of the first release: runs recorded before any delivery patch keep them."""
BY_KIND = DeliveryRules(lots_by_sender=False, senders_by_identity=False)
"""Early deliveries in a lot per kind, as runs before lots by sender keep them."""
BY_SENDER = DeliveryRules(senders_by_identity=False)
"""Lots by sender, a sender told as parsed."""


def answer(text: JsonValue, *, wait_id: str = "w", actor: str = "human:alice") -> Delivery:
    return Delivery(wait_id=wait_id, kind=WaitKind.USER_INPUT, actor=actor, payload=text)


def approval(
    decision: Decision | None, *, wait_id: str = "approve-change", actor: str = "human:alice"
) -> Delivery:
    return Delivery(wait_id=wait_id, kind=WaitKind.APPROVAL, actor=actor, decision=decision)


def operation_result(
    operation_id: str, data: JsonValue = "ok", actor: str = "system:jobs"
) -> Delivery:
    return Delivery(
        operation_id=operation_id,
        kind=WaitKind.ASYNC_OPERATION,
        actor=actor,
        payload=data,
    )


def event_delivery(
    event: str, data: JsonValue = "ok", kind: WaitKind = WaitKind.EXTERNAL_EVENT
) -> Delivery:
    return Delivery(event=event, kind=kind, actor="system:ci", payload=data)


def approval_book() -> WaitBook:
    return wait_book(wait("approve-change", WaitKind.APPROVAL, node_id="change"))


def snapshot(book: WaitBook) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Everything a delivery could change, to compare before and after."""
    waits = {wait_id: opened.model_dump() for wait_id, opened in book.waits.items()}
    return waits, [parked.model_dump() for parked in book.parked]


def refused(book: WaitBook, delivery: Delivery) -> DeliveryReceipt:
    """Deliver, and check the refusal changed nothing."""
    before = snapshot(book)
    receipt = book.deliver(delivery, LATER)
    assert not receipt.accepted
    assert not receipt.duplicate
    assert snapshot(book) == before
    return receipt


# --- one delivery per wait ------------------------------------------------------------------


def test_a_pending_wait_takes_a_delivery_and_records_who_delivered_it_and_when() -> None:
    book = wait_book(wait("w"))

    receipt = book.deliver(answer("Paris and Tokyo", actor="human:alice"), LATER)

    assert receipt == DeliveryReceipt(accepted=True, wait_id="w", reason="delivered")
    delivered = book.waits["w"]
    assert delivered.status is WaitStatus.DELIVERED
    assert delivered.delivered_by == "human:alice"
    assert delivered.delivered_at == LATER
    assert delivered.payload == "Paris and Tokyo"
    assert book.pending() == []


def test_an_identical_second_delivery_is_accepted_as_a_duplicate_and_changes_nothing() -> None:
    book = wait_book(wait("w"))
    book.deliver(answer("Paris", actor="human:alice"), START)
    before = snapshot(book)

    receipt = book.deliver(answer("Paris", actor="human:bob"), LATER)

    assert receipt.accepted
    assert receipt.duplicate
    assert receipt.wait_id == "w"
    assert snapshot(book) == before
    assert book.waits["w"].delivered_by == "human:alice"


def test_a_second_delivery_with_different_content_is_refused_and_names_the_first_sender() -> None:
    book = wait_book(wait("w"))
    book.deliver(answer("Paris", actor="human:alice"), START)

    receipt = refused(book, answer("Tokyo", actor="human:bob"))

    assert receipt.wait_id == "w"
    assert "already delivered by human:alice" in receipt.reason
    assert book.waits["w"].payload == "Paris"


def test_a_different_decision_on_a_decided_approval_is_refused() -> None:
    book = approval_book()
    book.deliver(approval(Decision.APPROVE), START)

    receipt = refused(book, approval(Decision.REJECT, actor="human:bob"))

    assert "different content" in receipt.reason
    assert book.waits["approve-change"].decision is Decision.APPROVE


# --- what a delivery must be ----------------------------------------------------------------


def test_a_delivery_of_the_wrong_kind_is_refused() -> None:
    book = wait_book(wait("w", WaitKind.USER_INPUT))

    receipt = refused(book, approval(Decision.APPROVE, wait_id="w"))

    assert receipt.reason == "wait 'w' is USER_INPUT, not APPROVAL"


def test_agent_actor_cannot_approve() -> None:
    book = approval_book()

    receipt = refused(book, approval(Decision.APPROVE, actor="agent:planner"))

    assert receipt.reason == "agent:planner is an agent; agents can never approve"
    assert book.waits["approve-change"].status is WaitStatus.PENDING


@pytest.mark.parametrize("actor", ["AGENT:planner", " agent : planner"])
def test_an_agent_cannot_approve_under_another_spelling(actor: str) -> None:
    receipt = refused(approval_book(), approval(Decision.APPROVE, actor=actor))

    assert "agents can never approve" in receipt.reason


def test_an_agent_may_reject_an_approval() -> None:
    book = approval_book()

    receipt = book.deliver(approval(Decision.REJECT, actor="agent:reviewer"), LATER)

    assert receipt.accepted
    assert book.waits["approve-change"].decision is Decision.REJECT
    assert book.waits["approve-change"].delivered_by == "agent:reviewer"


@pytest.mark.parametrize("actor", ["human:alice", "system:deploy-bot"])
def test_a_person_or_a_system_may_approve(actor: str) -> None:
    book = approval_book()

    assert book.deliver(approval(Decision.APPROVE, actor=actor), LATER).accepted
    assert book.waits["approve-change"].decision is Decision.APPROVE


@pytest.mark.parametrize("actor", ["alice", "robot:r2", "human:", "human:   ", ":alice", ""])
def test_a_malformed_actor_is_refused_with_the_accepted_forms(actor: str) -> None:
    book = wait_book(wait("w"))

    receipt = refused(book, answer("Paris", actor=actor))

    assert ACCEPTED_FORMS in receipt.reason
    assert f"'{actor}'" in receipt.reason


def test_an_approval_without_a_decision_is_refused() -> None:
    book = approval_book()

    receipt = refused(book, approval(None))

    assert receipt.reason == "an approval needs a decision: approve or reject"


@pytest.mark.parametrize("text", ["", "   \n", None, 42, {"text": "Paris"}])
def test_an_answer_without_text_is_refused(text: JsonValue) -> None:
    book = wait_book(wait("w"))

    receipt = refused(book, answer(text))

    assert receipt.reason == "an answer needs non-empty text"


def test_a_delivery_to_a_wait_that_does_not_exist_is_refused_and_not_parked() -> None:
    book = wait_book(wait("w"))

    receipt = refused(book, answer("Paris", wait_id="nope"))

    assert receipt.reason == "no wait matches 'nope'"
    assert receipt.wait_id is None


# --- closed waits ---------------------------------------------------------------------------


@pytest.mark.parametrize("closed_as", [WaitStatus.EXPIRED, WaitStatus.CANCELLED])
def test_a_late_delivery_to_a_closed_wait_is_quarantined(closed_as: WaitStatus) -> None:
    book = wait_book(wait("w"))
    book.close("w", closed_as)

    receipt = refused(book, answer("Paris"))

    assert receipt.wait_id == "w"
    assert f"is {closed_as.value}" in receipt.reason
    assert "quarantined" in receipt.reason
    assert book.waits["w"].delivered_by is None


def test_a_late_result_for_a_closed_operation_wait_is_quarantined_not_parked() -> None:
    book = wait_book(wait("op-job", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"))
    book.close("op-job", WaitStatus.EXPIRED)

    receipt = refused(book, operation_result("run-1:job:x"))

    assert "quarantined" in receipt.reason
    assert book.parked == []


def test_closing_a_delivered_wait_leaves_it_delivered() -> None:
    book = wait_book(wait("w"))
    book.deliver(answer("Paris"), START)

    book.close("w", WaitStatus.CANCELLED)

    assert book.waits["w"].status is WaitStatus.DELIVERED


# --- early deliveries -----------------------------------------------------------------------


def test_a_result_that_beats_its_wait_is_parked_and_handed_over_when_the_wait_opens() -> None:
    book = WaitBook()

    receipt = book.deliver(operation_result("run-1:job:x", {"rows": 3}), START)

    assert receipt.accepted
    assert not receipt.duplicate
    assert receipt.reason == "'run-1:job:x' is not awaited yet; parked until it is"
    assert book.waits == {}
    opened = book.open(wait("op-job", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"))
    handed_over = book.unpark(opened, LATER)
    assert handed_over is not None
    assert handed_over.payload == {"rows": 3}
    assert book.parked == []
    assert book.deliver(handed_over, LATER).accepted
    assert book.waits["op-job"].payload == {"rows": 3}


def test_an_event_that_comes_before_its_wait_is_handed_over_with_the_wait_kind() -> None:
    book = WaitBook()
    early = event_delivery("deploy.done", {"version": "1.2"}, kind=WaitKind.ASYNC_OPERATION)
    book.deliver(early, START)

    opened = book.open(wait("event-signal", WaitKind.EXTERNAL_EVENT, event="deploy.done"))
    handed_over = book.unpark(opened, LATER)

    assert handed_over is not None
    assert handed_over.kind is WaitKind.EXTERNAL_EVENT
    assert book.deliver(handed_over, LATER).accepted
    assert book.waits["event-signal"].payload == {"version": "1.2"}


def test_unpark_hands_over_only_the_delivery_for_that_wait() -> None:
    book = WaitBook()
    book.deliver(operation_result("job-a"), START)
    book.deliver(event_delivery("deploy.done"), START)

    opened = book.open(wait("op-b", WaitKind.ASYNC_OPERATION, operation_id="job-b"))

    assert book.unpark(opened, LATER) is None
    assert [p.delivery.operation_id or p.delivery.event for p in book.parked] == [
        "job-a",
        "deploy.done",
    ]


def test_under_the_first_rules_parking_stops_at_max_parked_early_deliveries() -> None:
    book = WaitBook()
    for number in range(MAX_PARKED):
        assert book.deliver(operation_result(f"job-{number}"), START, FIRST_RULES).accepted

    receipt = book.deliver(operation_result("one-too-many"), START, FIRST_RULES)

    assert (receipt.accepted, receipt.reason) == (False, "too many early deliveries parked")
    assert len(book.parked) == MAX_PARKED


def test_junk_early_deliveries_cannot_push_out_a_real_result_that_comes_after_them() -> None:
    book = WaitBook()
    for number in range(MAX_PARKED):
        assert book.deliver(operation_result(f"junk-{number}"), START, BY_KIND).accepted
    assert book.deliver(operation_result("run-1:job:x", {"rows": 3}), START, BY_KIND).accepted

    opened = book.open(wait("op-job", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"))
    handed_over = book.unpark(opened, LATER)

    assert handed_over is not None and handed_over.payload == {"rows": 3}
    assert len(book.parked) == MAX_PARKED_PER_KIND - 1


def test_early_results_and_early_events_each_have_a_lot_of_their_own() -> None:
    book = WaitBook()
    for number in range(MAX_PARKED_PER_KIND + 5):
        book.deliver(event_delivery(f"junk-{number}"), START, BY_KIND)
    book.deliver(operation_result("run-1:job:x"), START, BY_KIND)

    lots = [p.delivery.event is not None for p in book.parked]
    assert (lots.count(True), lots.count(False)) == (MAX_PARKED_PER_KIND, 1)


def test_a_parked_delivery_expires_after_an_hour() -> None:
    book = WaitBook()
    book.deliver(operation_result("run-1:job:x"), START)
    opened = book.open(wait("op-job", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"))

    assert book.unpark(opened, START + PARKED_FOR) is None
    book.deliver(operation_result("other"), START + PARKED_FOR)
    assert [p.delivery.operation_id for p in book.parked] == ["other"]


def test_under_the_first_rules_a_result_goes_to_the_first_wait_with_its_operation_id() -> None:
    book = wait_book(
        wait("op-job", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"),
        wait("op-job-2", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"),
    )
    book.close("op-job", WaitStatus.EXPIRED)

    receipt = book.deliver(operation_result("run-1:job:x"), LATER, FIRST_RULES)

    assert (receipt.accepted, receipt.wait_id) == (False, "op-job")


def test_an_early_delivery_from_a_malformed_actor_is_refused_at_once() -> None:
    book = WaitBook()
    early = Delivery(operation_id="job-x", kind=WaitKind.ASYNC_OPERATION, actor="nobody")

    receipt = book.deliver(early, START)

    assert not receipt.accepted
    assert book.parked == []


# --- early deliveries in lots by sender (0.10) -----------------------------------------------


def park_by_sender(book: WaitBook, delivery: Delivery, signed: bool | None = None) -> bool:
    receipt = book.deliver(delivery, START, BY_SENDER, signed=signed)
    return receipt.accepted


def handed_over_to(book: WaitBook, operation_id: str) -> JsonValue:
    """The data a wait for `operation_id`, opened now, is handed over from the parked lot."""
    opened = book.open(
        wait(f"op-{operation_id}", WaitKind.ASYNC_OPERATION, operation_id=operation_id)
    )
    handed_over = book.unpark(opened, LATER)
    return handed_over.payload if handed_over is not None else None


JUNK = 200


def test_by_kind_two_hundred_junk_results_after_a_real_one_push_it_out() -> None:
    """The finding (F7) under the lots of 0.2 to 0.9, kept for the runs that started on them."""
    book = WaitBook()
    book.deliver(
        operation_result("run-1:job:x", {"rows": 3}, actor="system:payments"), START, BY_KIND
    )
    for number in range(JUNK):
        book.deliver(operation_result(f"junk-{number}", actor="system:junk"), START, BY_KIND)

    assert handed_over_to(book, "run-1:job:x") is None


def test_by_sender_one_senders_junk_after_a_real_result_does_not_evict_it() -> None:
    book = WaitBook()
    real = operation_result("run-1:job:x", {"rows": 3}, actor="system:payments")
    assert park_by_sender(book, real)
    for number in range(JUNK):
        assert park_by_sender(book, operation_result(f"junk-{number}", actor="system:junk"))

    assert handed_over_to(book, "run-1:job:x") == {"rows": 3}
    assert len(book.parked) == MAX_PARKED_PER_SENDER


def test_by_sender_one_senders_junk_before_a_real_result_does_not_crowd_it_out() -> None:
    book = WaitBook()
    for number in range(JUNK):
        park_by_sender(book, operation_result(f"junk-{number}", actor="system:junk"))
    real = operation_result("run-1:job:x", {"rows": 3}, actor="system:payments")

    assert park_by_sender(book, real)
    assert handed_over_to(book, "run-1:job:x") == {"rows": 3}


def test_by_sender_a_senders_lot_is_one_lot_however_the_actor_is_spelt() -> None:
    book = WaitBook()
    spellings = ["system:junk", "System:junk", " system: junk"]
    for number in range(JUNK):
        park_by_sender(book, operation_result(f"junk-{number}", actor=spellings[number % 3]))

    assert len(book.parked) == MAX_PARKED_PER_SENDER


def test_by_sender_a_full_lot_lets_its_own_oldest_entry_go() -> None:
    book = WaitBook()
    for number in range(MAX_PARKED_PER_SENDER + 1):
        park_by_sender(book, operation_result(f"job-{number}"))

    assert [p.delivery.operation_id for p in book.parked][:2] == ["job-1", "job-2"]
    assert len(book.parked) == MAX_PARKED_PER_SENDER


def test_by_sender_when_all_lots_are_full_the_largest_gives_way_not_a_small_one() -> None:
    book = WaitBook()
    park_by_sender(book, operation_result("run-1:job:x", {"rows": 3}, actor="system:payments"))
    senders = MAX_PARKED // MAX_PARKED_PER_SENDER
    for sender in range(senders):
        for number in range(MAX_PARKED_PER_SENDER):
            park_by_sender(
                book, operation_result(f"junk-{sender}-{number}", actor=f"system:j{sender}")
            )

    assert len(book.parked) == MAX_PARKED
    assert handed_over_to(book, "run-1:job:x") == {"rows": 3}


def test_in_a_run_with_actor_keys_only_a_signed_early_delivery_is_parked() -> None:
    book = WaitBook()

    unsigned = book.deliver(
        operation_result("junk-1", actor="system:junk"),
        START,
        BY_SENDER,
        signed=False,
    )

    assert not unsigned.accepted and "actor keys" in unsigned.reason
    assert book.parked == []
    assert park_by_sender(book, operation_result("run-1:job:x", actor="system:payments"), True)
    assert handed_over_to(book, "run-1:job:x") == "ok"


# --- late deliveries ------------------------------------------------------------------------


def test_a_delivery_to_a_closed_wait_is_marked_late() -> None:
    book = wait_book(wait("op-job", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"))
    book.close("op-job", WaitStatus.EXPIRED)

    receipt = refused(book, operation_result("run-1:job:x"))

    assert receipt.late


def test_a_refused_delivery_to_a_pending_wait_is_not_late() -> None:
    assert not refused(approval_book(), answer("Paris", wait_id="approve-change")).late


def test_the_reconcile_that_settled_an_operation_is_found_for_its_late_result() -> None:
    book = wait_book(
        wait("op-pay", WaitKind.ASYNC_OPERATION, node_id="pay", operation_id="op-1"),
        wait("reconcile-pay", WaitKind.RECONCILE, node_id="pay"),
        wait("reconcile-other", WaitKind.RECONCILE, node_id="other"),
    )
    book.close("op-pay", WaitStatus.EXPIRED)
    assert book.settled_by_reconcile(book.waits["op-pay"]) is None
    reconciled = Delivery(
        wait_id="reconcile-pay",
        kind=WaitKind.RECONCILE,
        actor="human:ops",
        payload={"outcome": "failed"},
    )
    assert book.deliver(reconciled, LATER).accepted

    found = book.settled_by_reconcile(book.waits["op-pay"])

    assert found is not None and found.id == "reconcile-pay"


def test_a_late_deliverys_data_is_kept_short_in_the_trace() -> None:
    assert late_excerpt({"status": "paid"}) == '{"status": "paid"}'
    long = late_excerpt({"blob": "x" * 10_000})
    assert len(long) < LATE_EXCERPT_CHARS + 40 and long.endswith("characters)")


# --- which wait a delivery is for -----------------------------------------------------------


def test_free_id_numbers_a_wait_id_an_earlier_attempt_already_used() -> None:
    book = WaitBook()
    assert book.free_id("approve-change") == "approve-change"

    book.open(wait("approve-change", WaitKind.APPROVAL))
    assert book.free_id("approve-change") == "approve-change-2"

    book.open(wait("approve-change-2", WaitKind.APPROVAL))
    assert book.free_id("approve-change") == "approve-change-3"


def test_an_event_delivery_goes_to_the_pending_wait_for_that_event() -> None:
    book = wait_book(
        wait("event-signal", WaitKind.EXTERNAL_EVENT, event="deploy.done"),
        wait("event-signal-2", WaitKind.EXTERNAL_EVENT, event="deploy.done"),
    )
    book.close("event-signal", WaitStatus.EXPIRED)

    receipt = book.deliver(event_delivery("deploy.done"), LATER)

    assert receipt.accepted
    assert receipt.wait_id == "event-signal-2"


def test_an_event_delivery_never_matches_a_wait_that_is_no_longer_pending() -> None:
    book = wait_book(wait("event-signal", WaitKind.EXTERNAL_EVENT, event="deploy.done"))
    book.close("event-signal", WaitStatus.EXPIRED)

    assert book.find(event_delivery("deploy.done")) is None


def test_an_operation_result_goes_to_the_pending_wait_when_an_earlier_one_was_closed() -> None:
    book = wait_book(
        wait("op-job", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"),
        wait("op-job-2", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"),
    )
    book.close("op-job", WaitStatus.EXPIRED)

    receipt = book.deliver(operation_result("run-1:job:x"), LATER)

    assert receipt.accepted
    assert receipt.wait_id == "op-job-2"


def test_a_wait_takes_the_newest_early_result_and_leaves_no_duplicate_behind() -> None:
    book = WaitBook()
    book.deliver(operation_result("run-1:job:x", {"try": 1}), START)
    book.deliver(operation_result("run-1:job:x", {"try": 2}), START)
    opened = book.open(wait("op-job", WaitKind.ASYNC_OPERATION, operation_id="run-1:job:x"))

    handed_over = book.unpark(opened, LATER)

    assert handed_over is not None and handed_over.payload == {"try": 2}
    assert book.parked == []


def test_a_delivery_naming_an_unknown_operation_and_an_awaited_event_goes_to_the_event() -> None:
    book = wait_book(wait("event-go", WaitKind.EXTERNAL_EVENT, event="go"))
    both = Delivery(operation_id="none", event="go", kind=WaitKind.EXTERNAL_EVENT, actor="system:x")

    receipt = book.deliver(both, LATER)

    assert (receipt.accepted, receipt.wait_id) == (True, "event-go")


def test_a_long_comment_is_kept_once_in_its_wait_and_quoted_short_elsewhere() -> None:
    rejected = wait("approve-x", WaitKind.APPROVAL).model_copy(update={"comment": "no " * 400})
    excerpt = rejected.comment_excerpt()
    assert len(excerpt) < 260 and excerpt.endswith("(the whole comment is in wait approve-x)")
    short = rejected.model_copy(update={"comment": "too much"})
    assert short.comment_excerpt() == "too much"


def test_a_contract_that_keeps_approval_for_people_refuses_a_systems_approval_only() -> None:
    from harness.governance.host_contract import Act

    book = approval_book()
    book.humans_only = frozenset({Act.APPROVAL})
    before = snapshot(book)
    receipt = book.deliver(approval(Decision.APPROVE, actor="system:bot"), START)
    assert not receipt.accepted and "allow_system_approval off" in receipt.reason
    assert snapshot(book) == before
    assert book.deliver(approval(Decision.REJECT, actor="system:bot"), START).accepted


def test_a_contract_that_keeps_reconciliation_for_people_refuses_a_systems_reconcile() -> None:
    from harness.governance.host_contract import Act

    book = wait_book(wait("reconcile-pay", WaitKind.RECONCILE, node_id="pay"))
    book.humans_only = frozenset({Act.RECONCILIATION})
    outcome = {"outcome": "failed"}
    by_system = Delivery(
        wait_id="reconcile-pay", kind=WaitKind.RECONCILE, actor="system:bot", payload=outcome
    )
    receipt = book.deliver(by_system, START)
    assert not receipt.accepted and "allow_system_reconciliation off" in receipt.reason
    by_person = by_system.model_copy(update={"actor": "human:ops"})
    assert book.deliver(by_person, START).accepted
