"""The recovery policy: after a failed phase, replan, ask the user or halt, and where to go next."""

from __future__ import annotations

from typing import Any

import pytest

from harness.core.errors import ErrorClass as Class
from harness.core.errors import ErrorCode, FailureContext
from harness.engine.budget import Degradation as Level
from harness.engine.recovery import (
    BUDGET_EXHAUSTED,
    FATAL_HALTS,
    MODEL_CANNOT_PLAN,
    NEEDS_INFORMATION,
    NO_REPLAN_UNDER_PRESSURE,
    RETRIES_EXHAUSTED,
    FailedPhase,
    FailureCause,
    RecoveryAction,
    RecoveryDecision,
    RecoveryInput,
    decide,
    is_provider_failure,
)
from harness.engine.run import RunPhase as Then
from harness.engine.run_state import MAX_QUESTIONS
from tests.factories import run_state

At = FailedPhase
REPLAN, ASK_USER, HALT = RecoveryAction.REPLAN, RecoveryAction.ASK_USER, RecoveryAction.HALT


def facts(
    error_class: Class,
    failed: FailedPhase,
    level: Level = Level.FULL,
    *,
    used: int = 0,
    allowed: int = 2,
    ask: bool = False,
    provider: bool = False,
    refusals: int = 0,
) -> RecoveryInput:
    return RecoveryInput(
        error_class=error_class,
        failed=failed,
        replans_used=used,
        max_replans=allowed,
        degradation=level,
        may_ask_user=ask,
        provider_failed=provider,
        model_refusals=refusals,
    )


Row = tuple[RecoveryInput, RecoveryAction, Then]


def row(
    error_class: Class,
    failed: FailedPhase,
    level: Level,
    action: RecoveryAction,
    next_phase: Then,
    **more: Any,
) -> Row:
    """One line of the decision table: the facts, then the action and the phase entered next."""
    return facts(error_class, failed, level, **more), action, next_phase


def row_id(line: Row) -> str:
    given = line[0]
    name = f"{given.error_class}@{given.failed}-{given.degradation}"
    name += f"-{given.replans_used}of{given.max_replans}"
    name += "-provider" if given.provider_failed else ""
    name += f"-refusal{given.model_refusals}" if given.model_refusals else ""
    return name + ("-may_ask" if given.may_ask_user else "")


TABLE = [
    # TRANSIENT: Temporal has already retried it, so it halts wherever it happens.
    row(Class.TRANSIENT, At.PLANNING, Level.FULL, HALT, Then.FAILED_VALIDATION, ask=True),
    row(Class.TRANSIENT, At.VALIDATING, Level.FULL, HALT, Then.FAILED_VALIDATION),
    row(Class.TRANSIENT, At.EXECUTING, Level.FULL, HALT, Then.FAILED_EXECUTION),
    row(Class.TRANSIENT, At.VERIFYING, Level.FULL, HALT, Then.FAILED_VERIFICATION),
    row(Class.TRANSIENT, At.EXECUTING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
    # FATAL: another plan does not fix it.
    row(Class.FATAL, At.PLANNING, Level.FULL, HALT, Then.FAILED_VALIDATION, ask=True),
    row(Class.FATAL, At.VALIDATING, Level.FULL, HALT, Then.FAILED_VALIDATION),
    row(Class.FATAL, At.EXECUTING, Level.FULL, HALT, Then.FAILED_EXECUTION),
    row(Class.FATAL, At.VERIFYING, Level.FULL, HALT, Then.FAILED_VERIFICATION),
    row(Class.FATAL, At.VERIFYING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
    # MISSING_INFO at planning: ask while questions are left (replans and budget aside).
    row(Class.MISSING_INFO, At.PLANNING, Level.FULL, ASK_USER, Then.WAITING, ask=True),
    row(Class.MISSING_INFO, At.PLANNING, Level.FULL, ASK_USER, Then.WAITING, ask=True, used=2),
    row(Class.MISSING_INFO, At.PLANNING, Level.EXHAUSTED, ASK_USER, Then.WAITING, ask=True),
    row(Class.MISSING_INFO, At.PLANNING, Level.FULL, HALT, Then.FAILED_VALIDATION),
    row(Class.MISSING_INFO, At.PLANNING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
    # VALIDATION at planning (the model's plan did not parse): replan while allowed.
    row(Class.VALIDATION, At.PLANNING, Level.FULL, REPLAN, Then.REPLANNING, ask=True),
    row(Class.VALIDATION, At.PLANNING, Level.FULL, HALT, Then.FAILED_VALIDATION, used=2),
    row(Class.VALIDATION, At.PLANNING, Level.CONSERVE, REPLAN, Then.REPLANNING),
    row(Class.VALIDATION, At.PLANNING, Level.MINIMAL, REPLAN, Then.REPLANNING),
    row(Class.VALIDATION, At.PLANNING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
    # VALIDATION after planning: replan while replans and budget allow.
    row(Class.VALIDATION, At.VALIDATING, Level.FULL, REPLAN, Then.REPLANNING),
    row(Class.VALIDATION, At.VALIDATING, Level.FULL, HALT, Then.FAILED_VALIDATION, used=2),
    row(Class.VALIDATION, At.VALIDATING, Level.FULL, HALT, Then.FAILED_VALIDATION, allowed=0),
    row(Class.VALIDATION, At.VALIDATING, Level.CONSERVE, REPLAN, Then.REPLANNING),
    row(Class.VALIDATION, At.VALIDATING, Level.MINIMAL, REPLAN, Then.REPLANNING),
    row(Class.VALIDATION, At.VALIDATING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
    row(Class.VALIDATION, At.EXECUTING, Level.FULL, REPLAN, Then.REPLANNING, used=1),
    row(Class.VALIDATION, At.EXECUTING, Level.FULL, HALT, Then.FAILED_EXECUTION, used=2),
    row(Class.VALIDATION, At.EXECUTING, Level.CONSERVE, REPLAN, Then.REPLANNING),
    row(Class.VALIDATION, At.EXECUTING, Level.MINIMAL, REPLAN, Then.REPLANNING),
    row(Class.VALIDATION, At.EXECUTING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
    row(Class.VALIDATION, At.EXECUTING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED, used=2),
    row(Class.VALIDATION, At.VERIFYING, Level.FULL, REPLAN, Then.REPLANNING),
    row(Class.VALIDATION, At.VERIFYING, Level.FULL, HALT, Then.FAILED_VERIFICATION, used=2),
    row(Class.VALIDATION, At.VERIFYING, Level.CONSERVE, HALT, Then.FAILED_VERIFICATION),
    row(Class.VALIDATION, At.VERIFYING, Level.MINIMAL, HALT, Then.FAILED_VERIFICATION),
    row(Class.VALIDATION, At.VERIFYING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
    # A model call the provider refused or kept failing: a halt names the provider.
    row(Class.TRANSIENT, At.PLANNING, Level.FULL, HALT, Then.FAILED_PROVIDER, provider=True),
    row(Class.FATAL, At.PLANNING, Level.FULL, HALT, Then.FAILED_PROVIDER, provider=True, ask=True),
    row(Class.TRANSIENT, At.EXECUTING, Level.FULL, HALT, Then.FAILED_PROVIDER, provider=True),
    row(Class.FATAL, At.VERIFYING, Level.CONSERVE, HALT, Then.FAILED_PROVIDER, provider=True),
    row(Class.FATAL, At.EXECUTING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED, provider=True),
    # The model's cannot_plan: its first is planned once more, then the user is asked.
    row(Class.MISSING_INFO, At.PLANNING, Level.FULL, REPLAN, Then.REPLANNING, refusals=1, ask=True),
    row(Class.MISSING_INFO, At.PLANNING, Level.FULL, REPLAN, Then.REPLANNING, refusals=1),
    row(Class.MISSING_INFO, At.PLANNING, Level.FULL, ASK_USER, Then.WAITING, refusals=2, ask=True),
    row(Class.MISSING_INFO, At.PLANNING, Level.FULL, HALT, Then.FAILED_VALIDATION, refusals=2),
    row(
        Class.MISSING_INFO,
        At.PLANNING,
        Level.FULL,
        ASK_USER,
        Then.WAITING,
        refusals=1,
        used=2,
        ask=True,
    ),
    row(Class.MISSING_INFO, At.PLANNING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED, refusals=1),
    # MISSING_INFO after planning recovers like VALIDATION.
    row(Class.MISSING_INFO, At.VALIDATING, Level.FULL, REPLAN, Then.REPLANNING, ask=True),
    row(Class.MISSING_INFO, At.VALIDATING, Level.FULL, HALT, Then.FAILED_VALIDATION, used=2),
    row(Class.MISSING_INFO, At.VALIDATING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
    row(Class.MISSING_INFO, At.EXECUTING, Level.FULL, REPLAN, Then.REPLANNING, ask=True),
    row(Class.MISSING_INFO, At.EXECUTING, Level.FULL, HALT, Then.FAILED_EXECUTION, used=2),
    row(Class.MISSING_INFO, At.EXECUTING, Level.CONSERVE, REPLAN, Then.REPLANNING),
    row(Class.MISSING_INFO, At.EXECUTING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
    row(Class.MISSING_INFO, At.VERIFYING, Level.FULL, REPLAN, Then.REPLANNING),
    row(Class.MISSING_INFO, At.VERIFYING, Level.FULL, HALT, Then.FAILED_VERIFICATION, used=2),
    row(Class.MISSING_INFO, At.VERIFYING, Level.CONSERVE, HALT, Then.FAILED_VERIFICATION),
    row(Class.MISSING_INFO, At.VERIFYING, Level.EXHAUSTED, HALT, Then.BUDGET_EXHAUSTED),
]


@pytest.mark.parametrize(("given", "action", "next_phase"), TABLE, ids=map(row_id, TABLE))
def test_the_decision_table(given: RecoveryInput, action: RecoveryAction, next_phase: Then) -> None:
    decision = decide(given)

    assert (decision.action, decision.next_phase) == (action, next_phase)
    assert decision.error_class is given.error_class
    assert decision.reason.strip()


def test_the_table_covers_every_error_class_in_every_phase_at_every_level() -> None:
    covered = {(given.error_class, given.failed) for given, _, _ in TABLE}
    levels = {given.degradation for given, _, _ in TABLE}

    assert covered == {(error_class, failed) for error_class in Class for failed in At}
    assert levels == set(Level)


def test_a_transient_failure_halts_because_temporal_already_retried_it() -> None:
    decision = decide(facts(Class.TRANSIENT, At.EXECUTING, used=0, allowed=5))

    assert decision == RecoveryDecision(
        error_class=Class.TRANSIENT,
        action=HALT,
        next_phase=Then.FAILED_EXECUTION,
        reason=RETRIES_EXHAUSTED,
    )


def test_a_fatal_failure_halts_with_replans_left() -> None:
    decision = decide(facts(Class.FATAL, At.EXECUTING, used=0, allowed=5))

    assert (decision.action, decision.reason) == (HALT, FATAL_HALTS)


def test_an_exhausted_budget_ends_the_run_budget_exhausted() -> None:
    decision = decide(facts(Class.VALIDATION, At.EXECUTING, Level.EXHAUSTED))

    assert decision.action is HALT
    assert decision.next_phase is Then.BUDGET_EXHAUSTED
    assert decision.reason == BUDGET_EXHAUSTED


def test_a_failed_verdict_is_not_replanned_at_conserve_pressure() -> None:
    at_full = decide(facts(Class.VALIDATION, At.VERIFYING, Level.FULL))
    at_conserve = decide(facts(Class.VALIDATION, At.VERIFYING, Level.CONSERVE))

    assert at_full.action is REPLAN
    assert at_conserve.action is HALT
    assert at_conserve.next_phase is Then.FAILED_VERIFICATION
    assert at_conserve.reason == NO_REPLAN_UNDER_PRESSURE


def test_a_replan_counts_itself_and_the_last_one_left_is_named() -> None:
    assert decide(facts(Class.VALIDATION, At.EXECUTING, used=0)).reason == "replan 1 of 2"
    assert decide(facts(Class.VALIDATION, At.EXECUTING, used=1)).reason == "replan 2 of 2"
    assert decide(facts(Class.VALIDATION, At.EXECUTING, used=2)).reason == (
        "no replans left (2 of 2 used)"
    )


def test_missing_info_at_planning_asks_the_user_while_questions_are_left_then_halts() -> None:
    state = run_state("Refund my order")
    for number in range(MAX_QUESTIONS):
        asked = decide(state.recovery_input(Class.MISSING_INFO, At.PLANNING, Level.FULL))
        assert (asked.action, asked.next_phase) == (ASK_USER, Then.WAITING)
        state.answered(f"answer {number}")

    decision = decide(state.recovery_input(Class.MISSING_INFO, At.PLANNING, Level.FULL))

    assert (decision.action, decision.next_phase) == (HALT, Then.FAILED_VALIDATION)
    assert decision.reason == NEEDS_INFORMATION


def test_missing_info_at_planning_halts_at_once_when_the_run_may_not_ask() -> None:
    state = run_state("Refund my order", ask_user=False)

    decision = decide(state.recovery_input(Class.MISSING_INFO, At.PLANNING, Level.FULL))

    assert (decision.action, decision.reason) == (HALT, NEEDS_INFORMATION)


def test_a_models_cannot_plan_is_planned_once_more_then_asked() -> None:
    decision = decide(facts(Class.MISSING_INFO, At.PLANNING, refusals=1, ask=True))
    assert (decision.action, decision.reason) == (REPLAN, MODEL_CANNOT_PLAN)
    again = decide(facts(Class.MISSING_INFO, At.PLANNING, used=1, refusals=2, ask=True))
    assert again.action is ASK_USER


def test_only_the_model_call_codes_end_a_run_failed_provider() -> None:
    assert {code for code in ErrorCode if is_provider_failure(code)} == {
        ErrorCode.REQUEST_REJECTED,
        ErrorCode.AUTH_FAILED,
        ErrorCode.CONFIG_INVALID,
        ErrorCode.RATE_LIMITED,
        ErrorCode.TIMEOUT,
        ErrorCode.PROVIDER_UNAVAILABLE,
    }


def test_a_run_replans_its_first_cannot_plan_and_asks_after_its_second() -> None:
    state = run_state("Compare Paris and Tokyo")
    refusal = [FailureContext(code=ErrorCode.CANNOT_PLAN.value, message="no weather tool")]
    decisions = []
    for _ in range(2):
        state.begin_attempt()
        state.failed(Then.FAILED_VALIDATION, "planning failed", refusal)
        cause = FailureCause(model_refusals=state.model_refusals())
        decision = decide(state.recovery_input(Class.MISSING_INFO, At.PLANNING, Level.FULL, cause))
        decisions.append(decision.action)
        state.replans += decision.action is REPLAN
    assert decisions == [REPLAN, ASK_USER]
