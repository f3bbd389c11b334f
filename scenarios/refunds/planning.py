"""Offline planning rules for refunds: one order per run. The three checks run in parallel, the
refund waits for all of them (and for approval), and the report comes last.

The order id is read from the goal ("Refund order A-1001, the customer received a damaged item");
the rest of the sentence is the reason. When the order turns out not to exist, the planner asks
for the right id, and an answer that names one replaces it. A repair run on a task whose
earlier run paid the refund (its evidence carried forward), and a replan after the policy check
found the order refunded already by another run (ALREADY_DONE), check again and report the refund
already paid (`find_refund`), never paying twice.
"""

from __future__ import annotations

import re

from harness.core.errors import ErrorCode
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from scenarios.base import PlanningError, PlanningInput

ANSWER_PREFIX = "Answer:"
REFUND_TOOL = "submit_refund"
NO_REASON = "no reason given"
_ORDER_ID = re.compile(r"(?<![\w-])#?(?P<id>[A-Za-z]-\d{3,})(?![\w-])")
_REQUEST = re.compile(
    r"(?:please\s+)?(?:issue\s+)?(?:a\s+)?refund(?:\s+for)?(?:\s+the)?(?:\s+order)?\s*$", re.I
)
_CONNECTOR = re.compile(r"^(?:because|since|as|for)\b\s*", re.I)
_EDGES = " \t,.;:!-\u2013\u2014"


def order_ids(text: str) -> list[str]:
    """Distinct order ids in the order they appear, upper-cased."""
    found = [match["id"].upper() for match in _ORDER_ID.finditer(text)]
    return list(dict.fromkeys(found))


def requested_order(goal: str) -> str | None:
    """The order to refund: the last id an answer gives, else the one id the goal names."""
    request, *answers = goal.split("\n" + ANSWER_PREFIX)
    for answer in reversed(answers):
        if named := order_ids(answer):
            return named[-1]
    named = order_ids(request)
    if len(named) > 1:
        raise PlanningError(
            f"the goal names {len(named)} orders ({', '.join(named)}); a run refunds one "
            "order, so name just one"
        )
    return named[0] if named else None


def refund_reason(goal: str) -> str:
    """The goal's words other than the refund request itself, e.g. 'the customer received a
    damaged item'."""
    request = goal.split("\n" + ANSWER_PREFIX)[0]
    match = _ORDER_ID.search(request)
    if match is None:
        return request.strip(_EDGES) or NO_REASON
    before = _REQUEST.sub("", request[: match.start()]).strip(_EDGES)
    after = _CONNECTOR.sub("", request[match.end() :].strip(_EDGES)).strip(_EDGES)
    return " ".join(part for part in (before, after) if part) or NO_REASON


def plan_refund(request: PlanningInput) -> Plan:
    order_id = requested_order(request.goal)
    if order_id is None:
        raise PlanningError(
            "the goal names no order; which order should be refunded? Give its id, e.g. "
            "'Refund order A-1001, the customer received a damaged item'"
        )
    if order_id in _unknown_orders(request):
        raise PlanningError(
            f"there is no order '{order_id}'; which order should be refunded? Give its id, "
            "e.g. A-1001"
        )
    reason = refund_reason(request.goal)
    order = ArgumentBinding.literal("order_id", order_id)
    checks = [
        PlanNode(id="order", tool="lookup_order", arguments=[order]),
        PlanNode(
            id="policy",
            tool="check_refund_policy",
            arguments=[order, ArgumentBinding.literal("reason", reason)],
        ),
        PlanNode(id="dispute", tool="check_dispute_status", arguments=[order]),
    ]
    refund = PlanNode(
        id="refund",
        tool="submit_refund",
        arguments=[
            order,
            ArgumentBinding.node_result("amount_cents", "order", path="amount_cents"),
            ArgumentBinding.literal("reason", reason),
        ],
        deps=[node.id for node in checks],
    )
    if REFUND_TOOL in request.carried_tools or order_id in _refunded_orders(request):
        return _repair(order, reason)
    report = PlanNode(
        id="report",
        tool="summarize_refund",
        arguments=[
            ArgumentBinding.node_result("order", "order"),
            ArgumentBinding.node_result("policy", "policy"),
            ArgumentBinding.node_result("refund", "refund"),
            ArgumentBinding.literal("reason", reason),
        ],
        deps=["order", "policy", "refund"],
    )
    if not request.bound_to_task:
        return Plan(nodes=[*checks, refund, report])
    # what the checks established, for the task's ledger; the report waits for it (rule 2)
    report.deps.append("eligible")
    return Plan(nodes=[*checks, _eligible_fact(order_id), refund, report])


def _repair(order: ArgumentBinding, reason: str) -> Plan:
    """A repair run on a task whose refund an earlier run paid (its evidence is carried
    forward): look up the order, check the dispute status, find the refund paid, report."""
    nodes = [
        PlanNode(id="order", tool="lookup_order", arguments=[order]),
        PlanNode(id="dispute", tool="check_dispute_status", arguments=[order]),
        PlanNode(id="refund", tool="find_refund", arguments=[order], deps=["order", "dispute"]),
        PlanNode(
            id="report",
            tool="summarize_refund",
            arguments=[
                ArgumentBinding.node_result("order", "order"),
                ArgumentBinding.node_result("dispute", "dispute"),
                ArgumentBinding.node_result("refund", "refund"),
                ArgumentBinding.literal("reason", reason),
            ],
            deps=["order", "dispute", "refund"],
        ),
    ]
    return Plan(nodes=nodes)


def _eligible_fact(order_id: str) -> PlanNode:
    """The policy check passed (it fails the node otherwise): record that, supported by it."""
    return PlanNode(
        id="eligible",
        tool="harness_fact_record",
        arguments=[
            ArgumentBinding.literal("statement", f"order {order_id} is eligible for a refund"),
            ArgumentBinding.literal("source", "check_refund_policy"),
            ArgumentBinding.literal("confidence", 1.0),
            ArgumentBinding.literal("evidence_of", ["policy"]),
        ],
        deps=["policy"],
    )


def _refunded_orders(request: PlanningInput) -> set[str]:
    """Orders the policy check found refunded already by an earlier run (ALREADY_DONE)."""
    return _orders_failed_with(request, ErrorCode.ALREADY_DONE)


def _unknown_orders(request: PlanningInput) -> set[str]:
    return _orders_failed_with(request, ErrorCode.MISSING_INFO)


def _orders_failed_with(request: PlanningInput, code: ErrorCode) -> set[str]:
    return {
        str(failure.arguments["order_id"]).upper()
        for failure in request.failures
        if failure.code == code and failure.arguments and "order_id" in failure.arguments
    }
