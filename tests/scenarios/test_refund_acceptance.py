"""The refunds scenario's completion gates, and its repair plan: a repair run on a task whose
refund an earlier run paid checks again and reports that refund, never paying twice."""

from __future__ import annotations

import pytest

from harness.engine.validation import validate_plan
from harness.governance.gates import GateInput
from harness.governance.work import Evidence, EvidenceKind, RunBinding, TaskRecord
from scenarios import acceptance_checks, get_scenario
from scenarios.base import PlanningInput
from scenarios.refunds.acceptance import dispute_status_checked, payment_verified
from tests.factories import START

GOAL = "Refund order A-1005, the customer received a damaged item"


def given(*tools: str, recorded_by: str = "system:harness", run: str = "r-1") -> GateInput:
    task = TaskRecord(
        id="t",
        scope="s",
        title="t",
        created_by="human:ops",
        created_at=START,
        runs=[RunBinding(run_id="r-1", bound_at=START)],
    )
    evidence = [
        Evidence(
            id=f"ev-{n}", kind=EvidenceKind.TOOL, summary=tool, run_id=run, node_id=tool,
            tool=tool, recorded_by=recorded_by, recorded_at=START,
        )
        for n, tool in enumerate(tools, 1)
    ]  # fmt: skip
    return GateInput(task=task, evidence=evidence)


def test_the_refunds_scenario_registers_both_checks_by_id() -> None:
    assert {"dispute-status-checked", "payment-verified"} <= set(acceptance_checks())


async def test_dispute_status_checked_asks_for_a_dispute_lookup_in_the_evidence() -> None:
    missing = await dispute_status_checked(given("lookup_order", "submit_refund"), {})
    assert not missing.passed and "dispute status was not checked" in missing.reason
    checked = await dispute_status_checked(given("check_dispute_status"), {})
    assert checked.passed and "ev-1" in checked.reason
    # only the harness's record of a run bound to this task counts
    for forged in (given("check_dispute_status", recorded_by="human:x"),
                   given("check_dispute_status", run="r-other")):  # fmt: skip
        assert not (await dispute_status_checked(forged, {})).passed


async def test_payment_verified_fails_closed_without_a_refund_or_a_payment_service() -> None:
    no_refund = await payment_verified(given("lookup_order"), {})
    assert not no_refund.passed and "no submit_refund result" in no_refund.reason
    no_service = await payment_verified(given("submit_refund"), {})
    assert not no_service.passed and "no payment service" in no_service.reason


@pytest.mark.parametrize("carried", [(), ("lookup_order", "submit_refund")])
def test_a_repair_run_finds_the_refund_paid_instead_of_paying_again(
    carried: tuple[str, ...],
) -> None:
    scenario = get_scenario("refunds")
    planned = scenario.plan_offline(
        PlanningInput(
            goal=GOAL,
            catalog=scenario.catalog(),
            attempt=1,
            failures=[],
            previous_plan=None,
            bound_to_task=True,
            carried_tools=carried,
        )
    )
    tools = {node.id: node.tool for node in planned.nodes}
    assert validate_plan(planned, scenario.catalog()) == []
    assert tools["dispute"] == "check_dispute_status"
    if carried:
        assert tools["refund"] == "find_refund" and "submit_refund" not in tools.values()
    else:
        assert tools["refund"] == "submit_refund"
