"""RunState: the phases a run may move between, and what it reports when it ends."""

from __future__ import annotations

from datetime import timedelta

import pytest

from harness.core.errors import ErrorClass, ErrorCode, FailureContext
from harness.core.usage import TokenUsage
from harness.engine.budget import Budget, BudgetLimits, Degradation
from harness.engine.recovery import FailedPhase, RecoveryInput
from harness.engine.run import TERMINAL_PHASES, RunCounts, RunPhase, RunResult
from harness.engine.run_state import (
    MAX_QUESTIONS,
    TRANSITIONS,
    IllegalTransitionError,
    RunState,
    describe_transitions,
)
from harness.engine.trace import AgentRole
from tests.factories import START, delay, run_state, synthetic_plan

LEGAL = [(src, dst) for src, targets in TRANSITIONS.items() for dst in targets]
ILLEGAL = [
    (src, dst)
    for src in RunPhase
    for dst in RunPhase
    if dst is not src and dst not in TRANSITIONS[src]
]
NON_TERMINAL = [phase for phase in RunPhase if not phase.is_terminal]


def in_phase(phase: RunPhase) -> RunState:
    state = run_state()
    state.phase = phase
    return state


def finish(state: RunState, seconds: float = 90.0) -> RunResult:
    return state.result(
        finished_at=START + timedelta(seconds=seconds),
        nodes=[],
        counts=RunCounts(),
        budget=Budget(BudgetLimits()).snapshot(),
        waits=[],
        trace=[],
    )


def two_attempts(outcome: RunPhase, report: str | None = None) -> RunState:
    """A run whose first attempt failed in execution and whose second ended in `outcome`."""
    state = run_state()
    plan = synthetic_plan(delay("a", 10))
    state.begin_attempt()
    state.planned(plan, "offline")
    failure = FailureContext(node_id="a", code=ErrorCode.INVALID_ARGUMENT, message="ms < 0")
    state.failed(RunPhase.FAILED_EXECUTION, "node 'a' failed", [failure])
    state.replans = 1
    state.begin_attempt()
    state.planned(plan, "offline")
    state.charge(AgentRole.PLANNER, TokenUsage(input_tokens=100, output_tokens=20, cost_usd=0.01))
    state.charge(AgentRole.CRITIC, TokenUsage(input_tokens=50, output_tokens=5, cost_usd=0.002))
    state.charge(AgentRole.PLANNER, TokenUsage(input_tokens=30, output_tokens=10, cost_usd=0.003))
    state.report = report
    state.phase = outcome
    return state


# --- the state machine ----------------------------------------------------------------------


@pytest.mark.parametrize(("src", "dst"), LEGAL, ids=[f"{s}->{d}" for s, d in LEGAL])
def test_every_transition_in_the_table_is_taken(src: RunPhase, dst: RunPhase) -> None:
    state = in_phase(src)

    assert state.enter(dst) is True
    assert state.phase is dst


@pytest.mark.parametrize(("src", "dst"), ILLEGAL, ids=[f"{s}->{d}" for s, d in ILLEGAL])
def test_every_move_the_table_lacks_raises_and_changes_nothing(
    src: RunPhase, dst: RunPhase
) -> None:
    state = in_phase(src)
    before = state.model_dump()

    with pytest.raises(IllegalTransitionError, match=f"^{src.value} -> {dst.value} is not a"):
        state.enter(dst)

    assert state.model_dump() == before


@pytest.mark.parametrize("phase", list(RunPhase))
def test_entering_the_phase_a_run_is_in_is_not_a_change(phase: RunPhase) -> None:
    state = in_phase(phase)

    assert state.enter(phase) is False
    assert state.phase is phase


def test_terminal_phases_lead_nowhere_and_every_phase_has_a_row() -> None:
    assert set(TRANSITIONS) == set(RunPhase)
    assert {phase for phase, targets in TRANSITIONS.items() if not targets} == TERMINAL_PHASES


def test_a_new_run_is_created_and_cancelling_is_possible_from_every_live_phase() -> None:
    assert run_state().phase is RunPhase.CREATED
    assert all(RunPhase.CANCELLED in TRANSITIONS[phase] for phase in NON_TERMINAL)


def test_describe_transitions_has_one_line_per_non_terminal_phase() -> None:
    lines = describe_transitions()

    assert len(lines) == len(NON_TERMINAL)
    assert {line.split()[0] for line in lines} == {phase.value for phase in NON_TERMINAL}
    assert "REPLANNING  -> PLANNING | CANCELLED" in lines


# --- the goal and the questions -------------------------------------------------------------


def test_the_goal_carries_the_answers_to_the_questions_asked_along_the_way() -> None:
    state = run_state("Refund my order")
    assert state.goal() == "Refund my order"

    state.answered("A-1005")
    state.answered("it arrived broken")

    assert state.goal() == "Refund my order\nAnswer: A-1005\nAnswer: it arrived broken"


def test_an_answer_clears_the_failures_the_next_plan_would_be_told_about() -> None:
    state = run_state()
    state.begin_attempt()
    state.failed(
        RunPhase.FAILED_VALIDATION,
        "which order?",
        [FailureContext(code=ErrorCode.MISSING_INFO, message="which order?")],
    )

    state.answered("A-1005")

    assert state.failures == []
    assert state.attempt.failure[0].code == ErrorCode.MISSING_INFO


def test_the_user_may_be_asked_at_most_max_questions_times() -> None:
    state = run_state()
    for number in range(MAX_QUESTIONS):
        assert state.may_ask_user()
        state.answered(f"answer {number}")

    assert not state.may_ask_user()


def test_the_user_is_never_asked_when_the_request_says_not_to() -> None:
    assert not run_state(ask_user=False).may_ask_user()


def test_recovery_input_carries_the_replans_and_whether_the_user_may_be_asked() -> None:
    state = run_state(max_replans=3, ask_user=False)
    state.replans = 2

    given = state.recovery_input(ErrorClass.VALIDATION, FailedPhase.EXECUTING, Degradation.CONSERVE)

    assert given == RecoveryInput(
        error_class=ErrorClass.VALIDATION,
        failed=FailedPhase.EXECUTING,
        replans_used=2,
        max_replans=3,
        degradation=Degradation.CONSERVE,
        may_ask_user=False,
    )


# --- attempts and the result ----------------------------------------------------------------


def test_attempts_are_numbered_from_one_and_a_failure_is_kept_for_the_next_plan() -> None:
    state = two_attempts(RunPhase.SUCCEEDED)

    assert [record.attempt for record in state.attempts] == [1, 2]
    assert state.attempts[0].outcome is RunPhase.FAILED_EXECUTION
    assert state.attempts[0].planned_by == "offline"
    assert [failure.node_id for failure in state.failures] == ["a"]


def test_the_result_of_a_successful_run() -> None:
    state = two_attempts(RunPhase.SUCCEEDED, report="collected 1 results")

    result = finish(state, seconds=90.0)

    assert result.status is RunPhase.SUCCEEDED
    assert result.attempts == 2
    assert result.attempt_history == state.attempts
    assert result.error is None
    assert result.report == "collected 1 results"
    assert result.report_partial is False
    assert result.wall_seconds == 90.0
    assert (result.started_at, result.finished_at) == (START, START + timedelta(seconds=90))
    assert result.goal == state.goal()
    assert result.plan == state.plan


def test_the_result_sums_usage_in_total_and_by_role() -> None:
    result = finish(two_attempts(RunPhase.SUCCEEDED))

    assert (result.usage.input_tokens, result.usage.output_tokens) == (180, 35)
    assert result.usage.cost_usd == pytest.approx(0.015)
    assert set(result.usage_by_role) == {"planner", "critic"}
    assert result.usage_by_role["planner"].total_tokens == 160
    assert result.usage_by_role["critic"].total_tokens == 55


def test_a_failed_run_reports_its_error() -> None:
    result = finish(two_attempts(RunPhase.FAILED_EXECUTION))

    assert result.status is RunPhase.FAILED_EXECUTION
    assert result.error == "node 'a' failed"


@pytest.mark.parametrize(
    ("outcome", "report", "partial"),
    [
        (RunPhase.BUDGET_EXHAUSTED, "collected 1 results", True),
        (RunPhase.BUDGET_EXHAUSTED, None, False),
        (RunPhase.FAILED_VERIFICATION, "collected 1 results", False),
        (RunPhase.SUCCEEDED, "collected 1 results", False),
    ],
)
def test_a_report_is_partial_only_when_the_budget_ran_out_after_it_was_written(
    outcome: RunPhase, report: str | None, partial: bool
) -> None:
    assert finish(two_attempts(outcome, report)).report_partial is partial
