"""The contract in force: base, preset and rules merge as a union that only tightens; presets
fail closed; acts kept for people stay theirs; agents never approve, complete, reconcile or
promote."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.catalog.tools import ToolCatalog, ToolSpec
from harness.core.actors import ActorKind
from harness.governance.gates import GateInput, built_in_gates
from harness.governance.host_contract import (
    Act,
    Contract,
    Preset,
    Rule,
    RuleKind,
    held_to,
    in_force,
)
from harness.governance.work import Evidence, EvidenceKind, Submission, SubmissionStatus, TaskRecord
from tests.factories import START

REFUND = Preset(required_checks=["payment-verified"])
FAQ = Preset()
BASE = Contract(presets={"refund": REFUND, "faq": FAQ})


def rule(kind: RuleKind, target: str, preset: str | None = None, *, revoked: bool = False) -> Rule:
    return Rule(
        id=f"rule-{target}",
        kind=kind,
        target=target,
        preset=preset,
        lesson_id="lesson-1",
        promoted_by="human:ops-lead",
        promoted_at=START,
        revoked=revoked,
    )


def test_the_default_contract_is_strict_and_keeps_promotion_for_people() -> None:
    held = in_force(Contract(), [], "shop", None)
    assert held.gates() == ["approved-review", "completion-evidence"]
    assert held.humans_only() == {Act.PROMOTION}
    assert held.refusal(ActorKind.SYSTEM, Act.PROMOTION) is not None
    assert held.refusal(ActorKind.SYSTEM, Act.COMPLETION) is None


@pytest.mark.parametrize("act", list(Act))
def test_an_agent_is_refused_every_kept_act_whatever_the_contract_says(act: Act) -> None:
    permissive = Contract(
        allow_system_approval=True,
        allow_system_completion=True,
        allow_system_reconciliation=True,
        allow_system_promotion=True,
    )
    held = in_force(permissive, [], "shop", None)
    assert held.refusal(ActorKind.AGENT, act) == (
        f"an agent can never do {act.value}, whatever the contract says"
    )
    assert held.refusal(ActorKind.HUMAN, act) is None


@pytest.mark.parametrize(
    "flag, act",
    [
        ("allow_system_approval", Act.APPROVAL),
        ("allow_system_completion", Act.COMPLETION),
        ("allow_system_reconciliation", Act.RECONCILIATION),
    ],
)
def test_a_flag_turned_off_keeps_its_act_for_people(flag: str, act: Act) -> None:
    held = in_force(Contract.model_validate({flag: False}), [], "shop", None)
    refusal = held.refusal(ActorKind.SYSTEM, act)
    assert refusal is not None and f"{flag} off" in refusal
    assert held.refusal(ActorKind.HUMAN, act) is None


def test_a_preset_chooses_its_gates_and_rules_add_to_them() -> None:
    rules = [rule(RuleKind.REQUIRE_ACCEPTANCE_CHECK, "dispute-status-checked", "refund")]
    refund = in_force(BASE, rules, "shop", "refund")
    assert refund.gates() == [
        "approved-review",
        "completion-evidence",
        "dispute-status-checked",
        "payment-verified",
    ]
    # the rule was for refunds
    assert in_force(BASE, rules, "shop", "faq").gates() == [
        "approved-review",
        "completion-evidence",
    ]
    assert in_force(BASE, rules, "shop", None).gates() == ["approved-review", "completion-evidence"]


def test_a_rule_only_tightens_tool_rules_bind_every_preset() -> None:
    contract = Contract(approval_required_tools=["submit_refund"])
    rules = [
        rule(RuleKind.REQUIRE_APPROVAL_FOR_TOOL, "delay"),
        rule(RuleKind.REQUIRE_TASK_FOR_TOOL, "submit_refund"),
    ]
    for preset in (None, "refund"):
        held = in_force(contract.model_copy(update={"presets": BASE.presets}), rules, "s", preset)
        assert held.approval_required_tools == ["delay", "submit_refund"]
        assert held.task_required_tools == ["submit_refund"]


def test_a_revoked_rule_binds_nothing_and_stays_on_record() -> None:
    revoked = rule(RuleKind.REQUIRE_APPROVAL_FOR_TOOL, "delay", revoked=True)
    held = in_force(Contract(), [revoked], "shop", None)
    assert held.approval_required_tools == [] and held.rules == []
    assert revoked.revoked and revoked.lesson_id == "lesson-1"


def test_an_unknown_preset_fails_closed_with_a_did_you_mean_unless_the_contract_falls_back() -> (
    None
):
    assert BASE.preset_problem("refnd") == (
        "the contract has no preset 'refnd'; did you mean 'refund'? (presets: faq, refund)"
    )
    held = in_force(BASE, [], "shop", "refnd")
    given = GateInput(task=TaskRecord(id="t", scope="shop", title="t", created_by="h:x",
                                      created_at=START))  # fmt: skip
    (preset_gate, *_) = built_in_gates(held, given, START)
    assert preset_gate.gate == "preset" and not preset_gate.passed
    lenient = BASE.model_copy(update={"unknown_preset": "base"})
    assert lenient.preset_problem("refnd") is None


def test_a_typo_in_a_contract_is_an_error_not_a_looser_contract() -> None:
    with pytest.raises(ValidationError):
        Contract.model_validate({"requires_aproved_review": False})
    with pytest.raises(ValidationError):  # tool rules are global: a preset cannot hold one
        Preset.model_validate({"approval_required_tools": ["delay"]})
    assert Contract(approval_required_tools=["bad name"]).problems()


def test_the_catalog_a_run_is_held_to_only_gains_approvals_and_task_rules() -> None:
    catalog = ToolCatalog(
        scenario="s",
        tools=[
            ToolSpec(name="delay", description="d", arguments_schema={}),
            ToolSpec(name="pay", description="p", arguments_schema={}, requires_approval=True),
        ],
    )
    held = in_force(Contract(approval_required_tools=["delay"], task_required_tools=["pay"]),
                    [], "s", None)  # fmt: skip
    unbound = held_to(catalog, held, bound=False)
    assert [t.requires_approval for t in unbound.tools] == [True, True]
    assert [t.requires_task for t in unbound.tools] == [False, True]
    assert [t.requires_task for t in held_to(catalog, held, bound=True).tools] == [False, False]
    nothing = held_to(catalog, in_force(Contract(), [], "s", None), bound=False)
    assert nothing.tools[1].requires_approval  # what a tool asks for is never taken away


def _given(status: SubmissionStatus, evidence: list[str], unknown: list[str]) -> GateInput:
    task = TaskRecord(id="t", scope="s", title="t", created_by="human:x", created_at=START)
    submission = Submission(
        id="sub-1", summary="done", evidence_ids=evidence, status=status,
        submitted_by="system:harness", submitted_at=START,
    )  # fmt: skip
    records = [
        Evidence(id=ref, kind=EvidenceKind.TOOL, summary="s", recorded_by="system:harness",
                 recorded_at=START)
        for ref in evidence if ref not in unknown
    ]  # fmt: skip
    return GateInput(task=task, submission=submission, evidence=records, unknown=unknown)


@pytest.mark.parametrize(
    "status, evidence, unknown, verdicts",
    [
        (SubmissionStatus.APPROVED, ["ev-1"], [], [True, True]),
        (SubmissionStatus.PENDING, ["ev-1"], [], [False, True]),
        (SubmissionStatus.APPROVED, [], [], [True, False]),
        (SubmissionStatus.APPROVED, ["ev-1", "ev-9"], ["ev-9"], [True, False]),
    ],
)
def test_the_built_in_gates_pass_and_fail_on_the_reference_chain(
    status: SubmissionStatus, evidence: list[str], unknown: list[str], verdicts: list[bool]
) -> None:
    gates = built_in_gates(in_force(Contract(), [], "s", None), _given(status, evidence, unknown),
                           START)  # fmt: skip
    assert [g.passed for g in gates] == verdicts
    assert all(g.submission_id == "sub-1" and g.reason for g in gates)


def test_a_contract_that_turns_the_built_in_gates_off_evaluates_none_but_a_preset_adds_back() -> (
    None
):
    lax = Contract(
        requires_approved_review=False,
        requires_completion_evidence=False,
        presets={"refund": Preset(requires_approved_review=True), "faq": Preset()},
    )
    given = _given(SubmissionStatus.PENDING, [], [])
    assert built_in_gates(in_force(lax, [], "s", "faq"), given, START) == []
    (review,) = built_in_gates(in_force(lax, [], "s", "refund"), given, START)
    assert review.gate == "approved-review" and not review.passed


def test_a_preset_never_turns_off_a_gate_the_base_contract_requires() -> None:
    strict = Contract(presets={"faq": Preset(requires_approved_review=False)})
    assert in_force(strict, [], "s", "faq").gates() == ["approved-review", "completion-evidence"]
    assert Contract(required_checks=["approved-review"]).problems()
