"""A scope's contract and lessons behind one gateway: anyone proposes, an entitled actor
resolves, a person (or a system the contract allows) promotes; refusals change nothing."""

from __future__ import annotations

import pytest

from harness.governance.host_contract import Contract, Preset, RuleKind
from harness.governance.scope_rules import (
    PromoteLesson,
    ProposeLesson,
    ResolveLesson,
    RevokeRule,
    RulesCommand,
    RulesOperation,
    ScopeRules,
    ScopeRulesState,
    SetContract,
)
from tests.factories import START

HUMAN, SYSTEM, AGENT = "human:ops-lead", "system:ops-bot", "agent:planner"
LESSON = ProposeLesson(
    fact="chargeback on A-1001: the dispute status was not checked",
    evidence=["run:r-1/node:refund"],
    task_id="task-1",
    question="What must a refund check first?",
    proposal="refunds must check dispute status first",
)
DISPUTE = PromoteLesson(
    lesson_id="lesson-1",
    kind=RuleKind.REQUIRE_ACCEPTANCE_CHECK,
    target="dispute-status-checked",
    preset="refund",
)


def scope(contract: Contract | None = None) -> ScopeRules:
    state = ScopeRulesState(contract=contract or Contract(presets={"refund": Preset()}))
    return ScopeRules("shop", state)


def send(rules: ScopeRules, operation: RulesOperation, actor: str = HUMAN) -> str:
    receipt = rules.apply(RulesCommand(scope="shop", actor=actor, operation=operation), START)
    assert receipt.accepted, receipt.reason
    assert receipt.id is not None
    return receipt.id


def refused(rules: ScopeRules, operation: RulesOperation, actor: str) -> str:
    before = rules.state.model_copy(deep=True)
    problem = rules.check(RulesCommand(scope="shop", actor=actor, operation=operation))
    assert problem is not None
    assert rules.state == before  # nothing changed
    return problem


def accepted_lesson(rules: ScopeRules) -> None:
    send(rules, LESSON, AGENT)  # anyone may propose, an agent too
    send(rules, ResolveLesson(lesson_id="lesson-1", accept=True, reason="agreed"))


def test_a_lesson_becomes_a_rule_in_force_with_its_lineage() -> None:
    rules = scope()
    accepted_lesson(rules)
    assert send(rules, DISPUTE) == "rule-1"
    (lesson,) = rules.state.lessons
    assert lesson.rule_id == "rule-1" and lesson.evidence == ["run:r-1/node:refund"]
    assert lesson.decision.proposed_by == AGENT and lesson.decision.resolved_by == HUMAN
    assert "dispute-status-checked" in rules.in_force("refund").gates()
    assert "dispute-status-checked" not in rules.in_force(None).gates()


def test_an_agent_never_resolves_promotes_revokes_or_sets_the_contract() -> None:
    rules = scope()
    send(rules, LESSON, AGENT)
    resolve = ResolveLesson(lesson_id="lesson-1", accept=True, reason="me")
    assert "an agent can never resolve a lesson" in refused(rules, resolve, AGENT)
    send(rules, resolve)
    permissive = Contract(allow_system_promotion=True, presets={"refund": Preset()})
    rules.state.contract = permissive  # even where systems may promote
    assert "an agent can never promote a rule" in refused(rules, DISPUTE, AGENT)
    send(rules, DISPUTE)
    revoke = RevokeRule(rule_id="rule-1", reason="mine")
    assert "an agent can never revoke a rule" in refused(rules, revoke, AGENT)
    assert "only a person sets" in refused(rules, SetContract(contract=Contract()), AGENT)
    assert "only a person sets" in refused(rules, SetContract(contract=Contract()), SYSTEM)


def test_a_system_promotes_only_where_the_contract_allows_it() -> None:
    rules = scope()
    accepted_lesson(rules)
    assert "allow_system_promotion off" in refused(rules, DISPUTE, SYSTEM)
    rules.state.contract = Contract(allow_system_promotion=True, presets={"refund": Preset()})
    assert send(rules, DISPUTE, SYSTEM) == "rule-1"


def test_only_an_accepted_lesson_is_promoted_and_only_once() -> None:
    rules = scope()
    send(rules, LESSON)
    assert "only an ACCEPTED lesson" in refused(rules, DISPUTE, HUMAN)
    send(rules, ResolveLesson(lesson_id="lesson-1", accept=True, reason="yes"))
    send(rules, DISPUTE)
    assert "already rule 'rule-1'" in refused(rules, DISPUTE, HUMAN)
    missing = DISPUTE.model_copy(update={"lesson_id": "lesson-2"})
    assert "no lesson 'lesson-2'; did you mean 'lesson-1'?" in refused(rules, missing, HUMAN)


@pytest.mark.parametrize(
    "promotion, reason",
    [
        (DISPUTE.model_copy(update={"preset": "refnd"}), "did you mean 'refund'?"),
        (
            PromoteLesson(
                lesson_id="lesson-1",
                kind=RuleKind.REQUIRE_APPROVAL_FOR_TOOL,
                target="submit_refund",
                preset="refund",
            ),
            "tool rules are global",
        ),
        (DISPUTE.model_copy(update={"target": "approved-review"}), "built-in gate"),
        (DISPUTE.model_copy(update={"target": "no spaces"}), "must be 1-100"),
    ],
)
def test_a_promotion_names_what_exists_and_tool_rules_take_no_preset(
    promotion: PromoteLesson, reason: str
) -> None:
    rules = scope()
    accepted_lesson(rules)
    assert reason in refused(rules, promotion, HUMAN)


def test_a_revoked_rule_no_longer_binds_and_its_lineage_stays_readable() -> None:
    rules = scope()
    accepted_lesson(rules)
    send(rules, DISPUTE)
    send(rules, RevokeRule(rule_id="rule-1", reason="the payment service checks disputes now"))
    assert "dispute-status-checked" not in rules.in_force("refund").gates()
    (rule,) = rules.state.rules
    assert rule.revoked and rule.revoked_by == HUMAN and rule.lesson_id == "lesson-1"
    assert rules.state.lessons[0].fact.startswith("chargeback on A-1001")
    again = RevokeRule(rule_id="rule-1", reason="again")
    assert "already revoked" in refused(rules, again, HUMAN)


def test_a_contract_set_by_a_person_replaces_the_last_and_a_bad_one_is_refused() -> None:
    rules = scope()
    send(rules, SetContract(contract=Contract(approval_required_tools=["delay"])))
    assert rules.state.contract.approval_required_tools == ["delay"]
    assert rules.state.contract_set_by == HUMAN
    bad = SetContract(contract=Contract(task_required_tools=["two words"]))
    assert "tool 'two words' must be" in refused(rules, bad, HUMAN)


def test_the_same_command_under_one_key_applies_once() -> None:
    rules = scope()
    command = RulesCommand(scope="shop", actor=HUMAN, operation=LESSON, idempotency_key="k")
    first, second = rules.apply(command, START), rules.apply(command, START)
    assert first.id == second.id == "lesson-1" and second.duplicate
    assert len(rules.state.lessons) == 1
    other = command.model_copy(update={"operation": LESSON.model_copy(update={"fact": "other"})})
    assert "already used with other content" in (rules.check(other) or "")


def test_a_task_preset_is_one_the_contract_names_and_never_an_agents_choice() -> None:
    from harness.governance.task_graph import CreateTask, GraphCommand

    rules = scope()

    def create(preset: str | None, actor: str = HUMAN) -> GraphCommand:
        operation = CreateTask(title="t", preset=preset)
        return GraphCommand(scope="shop", actor=actor, operation=operation)

    assert rules.preset_problem(create("refund")) is None
    assert rules.preset_problem(create(None, AGENT)) is None
    assert "did you mean 'refund'" in (rules.preset_problem(create("refnd")) or "")
    assert "an agent cannot choose" in (rules.preset_problem(create("refund", AGENT)) or "")
