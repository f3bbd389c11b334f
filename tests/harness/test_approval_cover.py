"""ApprovalCover: a decision on an action (tool + canonical arguments) covers the same action
in later attempts of the run: an approval once per attempt, a rejection always."""

from __future__ import annotations

from harness.waits.approval_cover import ApprovalCover, action_key, approval_refusal
from harness.waits.wait_book import Decision, WaitKind, WaitStatus
from tests.factories import wait

REFUND = action_key("submit_refund", {"order_id": "A-1001", "amount_cents": 6480})


def decided(decision: Decision, wait_id: str = "approve-refund") -> ApprovalCover:
    approvals = ApprovalCover()
    approval = wait(wait_id, WaitKind.APPROVAL, node_id="refund")
    approval.status, approval.decision, approval.delivered_by = (
        WaitStatus.DELIVERED,
        decision,
        "human:ops",
    )
    approvals.decided(REFUND, approval, attempt=1)
    return approvals


def test_the_same_action_is_the_same_tool_with_the_same_arguments_in_any_order() -> None:
    reordered = action_key("submit_refund", {"amount_cents": 6480, "order_id": "A-1001"})
    assert reordered == REFUND
    assert action_key("submit_refund", {"order_id": "A-1001", "amount_cents": 6481}) != REFUND
    assert action_key("void_refund", {"order_id": "A-1001", "amount_cents": 6480}) != REFUND


def test_an_approval_covers_the_same_action_in_a_later_attempt_and_names_its_wait() -> None:
    cover = decided(Decision.APPROVE).cover(REFUND, attempt=2)

    assert cover is not None
    assert (cover.wait_id, cover.decided_by, cover.attempt) == ("approve-refund", "human:ops", 1)
    assert cover.decision is Decision.APPROVE


def test_an_approval_does_not_cover_a_second_node_with_the_action_in_its_own_attempt() -> None:
    assert decided(Decision.APPROVE).cover(REFUND, attempt=1) is None


def test_an_approval_covers_the_action_once_in_each_later_attempt() -> None:
    approvals = decided(Decision.APPROVE)

    assert approvals.cover(REFUND, attempt=2) is not None
    assert approvals.cover(REFUND, attempt=2) is None
    assert approvals.cover(REFUND, attempt=3) is not None


def test_an_approval_does_not_cover_another_action() -> None:
    other = action_key("submit_refund", {"order_id": "A-1002", "amount_cents": 6480})
    assert decided(Decision.APPROVE).cover(other, attempt=2) is None


def test_a_rejection_is_remembered_for_every_later_node_with_the_action() -> None:
    approvals = decided(Decision.REJECT)

    first, second = approvals.cover(REFUND, attempt=2), approvals.cover(REFUND, attempt=2)

    assert first is not None and first.decision is Decision.REJECT
    assert second is not None and second.decision is Decision.REJECT


def test_an_approval_that_expired_without_a_decision_covers_nothing() -> None:
    approvals = ApprovalCover()
    expired = wait("approve-refund", WaitKind.APPROVAL, node_id="refund")
    expired.status = WaitStatus.EXPIRED

    approvals.decided(REFUND, expired, attempt=1)

    assert approvals.cover(REFUND, attempt=2) is None


def test_a_later_decision_on_the_action_replaces_the_earlier_one() -> None:
    approvals = decided(Decision.APPROVE)
    again = wait("approve-refund-2", WaitKind.APPROVAL, node_id="refund")
    again.status, again.decision, again.delivered_by = (
        WaitStatus.DELIVERED,
        Decision.REJECT,
        "human:lead",
    )
    approvals.decided(REFUND, again, attempt=2)

    cover = approvals.cover(REFUND, attempt=3)

    assert cover is not None and (cover.decision, cover.wait_id) == (
        Decision.REJECT,
        "approve-refund-2",
    )


def test_an_approved_wait_or_cover_lets_its_node_go_ahead_and_a_rejection_names_who() -> None:
    approved = decided(Decision.APPROVE).cover(REFUND, attempt=2)
    rejected = decided(Decision.REJECT).cover(REFUND, attempt=2)
    assert approved is not None and rejected is not None

    assert approved.refusal() is None
    assert rejected.refusal() == (
        "rejected by human:ops in wait approve-refund (attempt 1); "
        "the same action is not asked again"
    )


def test_a_settled_approval_wait_refuses_its_node_unless_approved_saying_why() -> None:
    approval = wait("approve-refund", WaitKind.APPROVAL, node_id="refund")
    approval.status, approval.delivered_by = WaitStatus.DELIVERED, "human:ops"
    approval.decision, approval.comment = Decision.REJECT, "wrong order"
    assert approval_refusal(approval) == "rejected by human:ops: wrong order"

    approval.decision = Decision.APPROVE
    assert approval_refusal(approval) is None

    approval.status, approval.decision = WaitStatus.EXPIRED, None
    assert approval_refusal(approval) == "approval expired without a decision; treated as rejected"
