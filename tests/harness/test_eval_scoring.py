"""Scoring an eval case: each expectation a run does not meet is one reason, in words."""

from __future__ import annotations

from datetime import timedelta

import pytest

from harness.core.errors import ErrorCode, FailureContext
from harness.core.usage import TokenUsage
from harness.engine.dag import NodeStatus
from harness.engine.run import AttemptRecord, NodeOutcome, RunCounts, RunPhase, Verdict
from harness.engine.trace import TraceEvent, TraceKind
from harness.engine.validation import IssueCode, ValidationIssue
from harness.evals.eval_case import CaseExpectations, EvalCase
from harness.evals.eval_scoring import CaseObservation, observe, unmet
from harness.waits.wait_book import WaitKind
from tests.factories import START, run_result, wait


def seen(**fields: object) -> CaseObservation:
    return CaseObservation.model_validate({"status": RunPhase.SUCCEEDED, **fields})


def test_a_run_that_meets_every_expectation_has_no_unmet_one() -> None:
    expect = CaseExpectations(mentions=["Paris"], max_tool_calls=10, min_replans=0)
    assert unmet(expect, seen(report="Paris is big", tool_calls=7)) == []


@pytest.mark.parametrize(
    ("expect", "observation", "reason"),
    [
        (
            {"status": "FAILED_EXECUTION"},
            {"error": "node 'n1' failed"},
            "status is SUCCEEDED (node 'n1' failed), expected FAILED_EXECUTION",
        ),
        ({"mentions": ["Berlin"]}, {"report": "Paris"}, "does not mention 'Berlin'"),
        ({"not_mentions": ["atlantis"]}, {"report": "No data: Atlantis"}, "mentions 'atlantis'"),
        ({"min_replans": 1}, {"replans": 0}, "replans 0, expected at least 1"),
        ({"max_replans": 0}, {"replans": 2}, "replans 2, expected at most 0"),
        ({"max_tool_calls": 5}, {"tool_calls": 9}, "tool calls 9, expected at most 5"),
        ({"max_tokens": 100}, {"tokens": 101}, "tokens 101, expected at most 100"),
        ({"max_cost_usd": 0.01}, {"cost_usd": 0.02}, "cost USD 0.02, expected at most 0.01"),
        ({"validation_codes": ["CYCLE"]}, {}, "no validation code CYCLE (seen: none)"),
        (
            {"error_codes": ["TOOL_EXECUTION_FAILED"]},
            {"error_codes": ["MISSING_INFO"]},
            "seen: MISSING_INFO",
        ),
        ({"retried_tools": ["get_population"]}, {}, "no retried tool get_population"),
        ({"waits": ["APPROVAL"]}, {"wait_kinds": ["USER_INPUT"]}, "no wait of kind APPROVAL"),
        ({}, {"scenario_problems": ["paid twice"]}, "scenario check: paid twice"),
        ({"min_judge_score": 0.8}, {"judge_score": 0.5}, "judge score 0.5 is below 0.8"),
        ({"min_judge_score": 0.8}, {}, "no judge score"),
        ({}, {"driver_problems": ["no response for approve-x"]}, "no response for approve-x"),
    ],
)
def test_each_unmet_expectation_is_one_reason_in_words(
    expect: dict[str, object], observation: dict[str, object], reason: str
) -> None:
    problems = unmet(CaseExpectations.model_validate(expect), seen(**observation))
    assert len(problems) == 1
    assert reason in problems[0]


def test_a_status_list_accepts_any_of_its_statuses() -> None:
    expect = CaseExpectations(status=[RunPhase.SUCCEEDED, RunPhase.FAILED_VERIFICATION])
    assert unmet(expect, seen(status=RunPhase.FAILED_VERIFICATION)) == []


def test_a_case_that_turns_the_scenario_check_off_ignores_its_problems() -> None:
    expect = CaseExpectations(scenario_check=False)
    assert unmet(expect, seen(scenario_problems=["report names no city"])) == []


def test_observe_reads_codes_retries_waits_and_usage_off_the_run_result() -> None:
    result = run_result(
        status=RunPhase.FAILED_EXECUTION,
        attempts=2,
        counts=RunCounts(tool_calls=6, replans=1),
        usage=TokenUsage(input_tokens=100, output_tokens=20, cost_usd=0.5),
        attempt_history=[
            AttemptRecord(
                attempt=1,
                validation_issues=[ValidationIssue(code=IssueCode.CYCLE, message="a cycle")],
                failure=[FailureContext(code="VALIDATION", message="bad plan")],
            )
        ],
        nodes=[
            NodeOutcome(
                id="n1",
                tool="get_population",
                tool_role="DATA",
                status=NodeStatus.FAILED,
                error_code=ErrorCode.TOOL_EXECUTION_FAILED.value,
            )
        ],
        trace=[
            TraceEvent(at=START, run_id="run-1", kind=TraceKind.NODE_RETRY, attempt=1, tool="t1"),
            TraceEvent(
                at=START + timedelta(seconds=1),
                run_id="run-1",
                kind=TraceKind.NODE_FAIL,
                attempt=2,
                data={"error_code": "RATE_LIMITED"},
            ),
        ],
        waits=[wait("approve-refund", WaitKind.APPROVAL)],
        verdict=Verdict(passed=False, score=0.25),
    )
    observation = observe(result, ["a problem"], [])
    assert observation.validation_codes == ["CYCLE"]
    assert observation.error_codes == ["RATE_LIMITED", "TOOL_EXECUTION_FAILED", "VALIDATION"]
    assert observation.retried_tools == ["t1"]
    assert observation.wait_kinds == [WaitKind.APPROVAL]
    assert (observation.tokens, observation.tool_calls, observation.replans) == (120, 6, 1)
    assert observation.judge_score == 0.25
    assert observation.scenario_problems == ["a problem"]


def test_a_case_expects_success_by_default() -> None:
    case = EvalCase(id="x", goal="Compare Paris and Tokyo")
    assert case.expect.statuses() == [RunPhase.SUCCEEDED]


def test_an_expectation_past_float_range_is_unmet_in_words_not_raised() -> None:
    expect = CaseExpectations(min_replans=10**400)
    assert unmet(expect, seen()) == ["replans 0, expected at least a number of about 401 digits"]
