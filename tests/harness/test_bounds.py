"""Every number a run takes is finite and in range, and every text and payload is bounded, so
no input can overflow a timer, outgrow a payload or stall the first workflow task. The models
keep their 0.1 validation (they are decoded again on replay); harness.engine.bounds holds the
ranges."""

from __future__ import annotations

import math

import pytest
from pydantic import JsonValue

from harness.core.limits import MAX_NAME_CHARS
from harness.core.plan import Plan
from harness.engine.bounds import (
    A_YEAR,
    MAX_COMMENT_CHARS,
    MAX_DATA_BYTES,
    MAX_GOAL_CHARS,
    MAX_PLAN_NODES,
    MAX_WAIT_SECONDS,
    delivery_problems,
    request_problems,
    wait_seconds_problem,
)
from harness.engine.budget import BudgetLimits
from harness.engine.run import ExecutionOptions, RunRequest, WaitTimeouts
from harness.waits.deliveries import AnswerRequest, ApprovalRequest, CancelRequest, DeliverRequest
from tests.factories import delay


def test_an_ordinary_request_is_in_range() -> None:
    assert request_problems(RunRequest(goal="Compare Paris and Tokyo")) == []


@pytest.mark.parametrize("seconds", [math.inf, 1e300, A_YEAR + 1])
def test_a_wall_clock_budget_is_finite_and_at_most_a_year(seconds: float) -> None:
    request = RunRequest(goal="g", limits=BudgetLimits(max_seconds=seconds))
    assert [p.split(":")[0] for p in request_problems(request)] == ["max_seconds"]


def test_a_year_of_wall_clock_budget_is_in_range() -> None:
    assert request_problems(RunRequest(goal="g", limits=BudgetLimits(max_seconds=A_YEAR))) == []


@pytest.mark.parametrize("cost", [math.inf, 1e7])
def test_a_cost_budget_is_finite_and_in_range(cost: float) -> None:
    request = RunRequest(goal="g", limits=BudgetLimits(max_cost_usd=cost))
    assert [p.split(":")[0] for p in request_problems(request)] == ["max_cost_usd"]


def test_wait_timeouts_are_finite() -> None:
    request = RunRequest(goal="g", wait_timeouts=WaitTimeouts(approval=math.inf))
    assert [p.split(":")[0] for p in request_problems(request)] == ["wait_timeouts.approval"]


@pytest.mark.parametrize("goal", ["   \n", "x" * (MAX_GOAL_CHARS + 1)])
def test_a_goal_needs_words_and_a_bounded_length(goal: str) -> None:
    assert [p.split(":")[0] for p in request_problems(RunRequest(goal=goal))] == ["goal"]


def test_a_plan_larger_than_any_run_takes_is_out_of_range() -> None:
    nodes = [delay(f"n{i}", 0) for i in range(MAX_PLAN_NODES + 1)]
    request = RunRequest(goal="wide", scenario="synthetic", plan=Plan(nodes=nodes))
    assert request_problems(request) == [
        f"plan: a plan has at most {MAX_PLAN_NODES} nodes; this one has {MAX_PLAN_NODES + 1}"
    ]


def test_every_problem_of_a_request_is_reported_at_once() -> None:
    request = RunRequest(goal=" ", max_replans=50, limits=BudgetLimits(max_seconds=math.inf))
    assert [p.split(":")[0] for p in request_problems(request)] == [
        "goal",
        "max_seconds",
        "max_replans",
    ]


def test_delivered_data_is_bounded_as_json() -> None:
    assert delivery_problems(DeliverRequest(event="e", data="x" * (MAX_DATA_BYTES - 10))) == []
    too_big = DeliverRequest(event="e", data="x" * MAX_DATA_BYTES)
    assert delivery_problems(too_big)[0].startswith("data:")


def test_comments_answers_reasons_and_names_in_deliveries_are_bounded() -> None:
    long_comment = ApprovalRequest(wait_id="w", actor="h:a", comment="c" * (MAX_COMMENT_CHARS + 1))
    long_name = ApprovalRequest(wait_id="w" * (MAX_NAME_CHARS + 1), actor="h:a")
    long_answer = AnswerRequest(wait_id="w", text="t" * 10_001)
    long_reason = CancelRequest(reason="r" * (MAX_COMMENT_CHARS + 1))
    problems = [
        delivery_problems(r)[0].split(":")[0]
        for r in (long_comment, long_name, long_answer, long_reason)
    ]
    assert problems == ["comment", "wait_id", "text", "reason"]


@pytest.mark.parametrize(
    "field", ["max_tokens", "max_tool_calls", "max_replans", "max_concurrency", "max_nodes"]
)
def test_an_int_past_float_range_is_refused_by_name_not_raised(field: str) -> None:
    """10**400 is a valid JSON number and a valid int: comparing it must not convert it."""
    if field.startswith("max_to"):
        request = RunRequest(goal="g", limits=BudgetLimits.model_validate({field: 10**400}))
    else:
        request = RunRequest.model_validate({"goal": "g", field: 10**400})
    problems = request_problems(request)
    assert [p.split(":")[0] for p in problems] == [field]
    assert problems[0].endswith("not a number of about 401 digits")


@pytest.mark.parametrize("value", [math.nan, math.inf, -1, 1e300, 10**400, "soon"])
def test_a_wait_in_a_plan_is_a_number_of_seconds_a_timer_can_hold(value: JsonValue) -> None:
    assert wait_seconds_problem("timeout_seconds", value) is not None


@pytest.mark.parametrize("value", [0, 0.5, "30", A_YEAR, MAX_WAIT_SECONDS])
def test_a_wait_in_range_is_taken_as_the_workflow_reads_it(value: JsonValue) -> None:
    assert wait_seconds_problem("seconds", value) is None


def test_a_run_names_an_agent_runtime_the_harness_has_or_none() -> None:
    assert request_problems(RunRequest(goal="g", agent_runtime="pydantic-ai")) == []
    assert request_problems(RunRequest(goal="g", agent_runtime="builtin")) == []
    assert request_problems(RunRequest(goal="g", agent_runtime="langgraph")) == [
        "agent_runtime: no runtime 'langgraph'; the runtimes are builtin, pydantic-ai"
    ]


def test_a_run_without_an_agent_runtime_leaves_it_out_of_its_payloads() -> None:
    """Runs recorded before the option carry no such field, and replay as they ran."""
    request = RunRequest(goal="g")
    options = ExecutionOptions.of("run-1", request, 1, None)
    assert "agent_runtime" not in request.model_dump(mode="json")
    assert "agent_runtime" not in options.model_dump(mode="json")
    chosen = ExecutionOptions.of(
        "run-1", RunRequest(goal="g", agent_runtime="pydantic-ai"), 1, None
    )
    assert chosen.agent_runtime == "pydantic-ai"
