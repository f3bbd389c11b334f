"""Every number a run takes is finite and in range, and every text and payload is bounded, so
no input can overflow a timer, outgrow a payload or stall the first workflow task."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from harness.budget import MAX_BUDGET_SECONDS, BudgetLimits
from harness.deliveries import (
    MAX_COMMENT_CHARS,
    MAX_DATA_BYTES,
    MAX_NAME_CHARS,
    ApprovalRequest,
    DeliverRequest,
)
from harness.plan import Plan
from harness.run import MAX_GOAL_CHARS, MAX_PLAN_NODES, RunRequest, WaitTimeouts
from tests.factories import delay


@pytest.mark.parametrize("seconds", [math.nan, math.inf, 1e300, MAX_BUDGET_SECONDS + 1, 0.0])
def test_a_wall_clock_budget_must_be_finite_positive_and_at_most_a_year(seconds: float) -> None:
    with pytest.raises(ValidationError):
        BudgetLimits(max_seconds=seconds)


def test_a_year_of_wall_clock_budget_is_accepted() -> None:
    assert BudgetLimits(max_seconds=MAX_BUDGET_SECONDS).max_seconds == MAX_BUDGET_SECONDS


@pytest.mark.parametrize("cost", [math.nan, math.inf, -1.0, 1e7])
def test_a_cost_budget_must_be_finite_and_in_range(cost: float) -> None:
    with pytest.raises(ValidationError):
        BudgetLimits(max_cost_usd=cost)


def test_wait_timeouts_must_be_finite() -> None:
    with pytest.raises(ValidationError):
        WaitTimeouts(approval=math.inf)


@pytest.mark.parametrize("goal", ["", "   \n", "x" * (MAX_GOAL_CHARS + 1)])
def test_a_goal_needs_words_and_a_bounded_length(goal: str) -> None:
    with pytest.raises(ValidationError):
        RunRequest(goal=goal)


def test_a_plan_larger_than_any_run_takes_is_refused_before_it_starts() -> None:
    nodes = [delay(f"n{i}", 0) for i in range(MAX_PLAN_NODES + 1)]
    with pytest.raises(ValidationError, match=f"at most {MAX_PLAN_NODES} nodes"):
        RunRequest(goal="wide", scenario="synthetic", plan=Plan(nodes=nodes))


def test_delivered_data_is_bounded_as_json() -> None:
    DeliverRequest(event="e", data="x" * (MAX_DATA_BYTES - 10))
    with pytest.raises(ValidationError, match=f"at most {MAX_DATA_BYTES}"):
        DeliverRequest(event="e", data="x" * MAX_DATA_BYTES)


def test_comments_and_names_in_deliveries_are_bounded() -> None:
    with pytest.raises(ValidationError):
        ApprovalRequest(wait_id="w", actor="human:a", comment="c" * (MAX_COMMENT_CHARS + 1))
    with pytest.raises(ValidationError):
        ApprovalRequest(wait_id="w" * (MAX_NAME_CHARS + 1), actor="human:a")
