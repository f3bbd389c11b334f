"""The eval report's figures: pass rates, pass@k and pass^k, latency percentiles, and which
cases regressed against a baseline."""

from __future__ import annotations

import pytest

from harness.engine.run import RunPhase
from harness.evals.eval_case import EvalCase
from harness.evals.eval_report import (
    Baseline,
    CaseResult,
    EvalReport,
    EvalRequest,
    build_report,
    percentile,
    regressions,
)
from tests.factories import START


def result(case: str, passed: bool, repeat: int = 1, seconds: float = 1.0) -> CaseResult:
    scenario = case.split("/")[0]
    return CaseResult(
        case=case,
        scenario=scenario,
        repeat=repeat,
        run_id=f"e.{case}.{repeat}",
        passed=passed,
        status=RunPhase.SUCCEEDED,
        latency_seconds=seconds,
        tokens=100,
        cost_usd=0.01,
    )


def report_of(*results: CaseResult, repeat: int = 1) -> EvalReport:
    request = EvalRequest(cases=[EvalCase(id="x", goal="g", scenario="cities")], repeat=repeat)
    return build_report("eval-1", request, results, START, START)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([], 50, 0.0), ([3.0], 95, 3.0), ([1.0, 2.0, 3.0, 4.0], 50, 2.5), ([1.0, 2.0], 95, 1.95)],
)
def test_percentile_interpolates_between_the_closest_ranks(
    values: list[float], q: float, expected: float
) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_pass_rates_are_per_scenario_and_overall() -> None:
    report = report_of(
        result("cities/a", True),
        result("cities/b", False),
        result("games/c", True, seconds=3.0),
    )
    cities, games = report.scenarios
    assert (cities.scenario, cities.cases, cities.passed_runs, cities.pass_rate) == (
        "cities",
        2,
        1,
        0.5,
    )
    assert games.pass_rate == 1.0
    assert report.overall.pass_rate == pytest.approx(2 / 3)
    assert report.overall.tokens == 300
    assert report.overall.p50_seconds == 1.0


def test_each_ending_is_counted_apart_so_provider_failures_stand_out() -> None:
    provider = result("cities/b", False).model_copy(update={"status": RunPhase.FAILED_PROVIDER})
    never = result("games/c", False).model_copy(update={"status": None})
    report = report_of(result("cities/a", True), provider, never)
    assert report.overall.endings == {"FAILED_PROVIDER": 1, "NOT_ENDED": 1, "SUCCEEDED": 1}
    assert report.scenarios[0].endings == {"FAILED_PROVIDER": 1, "SUCCEEDED": 1}


def test_pass_at_k_needs_one_run_and_pass_all_k_needs_every_run() -> None:
    report = report_of(
        result("cities/a", True, 1),
        result("cities/a", False, 2),
        result("cities/b", True, 1),
        result("cities/b", True, 2),
        result("cities/c", False, 1),
        result("cities/c", False, 2),
        repeat=2,
    )
    assert report.overall.pass_at_k == pytest.approx(2 / 3)
    assert report.overall.pass_all_k == pytest.approx(1 / 3)
    assert report.case_passed() == {"cities/a": False, "cities/b": True, "cities/c": False}


def test_a_case_that_passed_in_the_baseline_and_fails_now_is_a_regression() -> None:
    before = Baseline.of(report_of(result("cities/a", True), result("cities/b", False)))
    now = report_of(result("cities/a", False), result("cities/b", False), result("cities/n", False))
    assert regressions(now, before) == ["cities/a"]


def test_a_case_that_failed_before_or_is_new_is_not_a_regression() -> None:
    before = Baseline.of(report_of(result("cities/b", False)))
    now = report_of(result("cities/b", False), result("cities/new", False))
    assert regressions(now, before) == []
