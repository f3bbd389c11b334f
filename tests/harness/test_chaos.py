"""Chaos for evals, the pure part: deterministic draws at the rate asked, provider names that
round-trip, marks read back from what a run recorded, and the recovery table and its baseline."""

from __future__ import annotations

import pytest

from harness.core.errors import FailureContext
from harness.core.plan import Plan
from harness.engine.run import AttemptRecord, RunPhase
from harness.evals.chaos import (
    KINDS,
    ChaosKind,
    ChaosSettings,
    ChaosSpec,
    is_chaos,
    mark,
    marked_kinds,
)
from harness.evals.chaos_report import ANY, NOT_ENDED, chaos_table, recovery_regressions
from harness.evals.eval_case import EvalCase
from harness.evals.eval_report import Baseline, CaseResult, EvalRequest, build_report
from harness.evals.eval_scoring import injected
from tests.factories import START

SPEC = ChaosSpec(rate=0.3, seed=38, key="cities/two-cities#1", inner="scripted")


def test_the_same_seed_and_key_draw_the_same_mistakes_and_another_key_others() -> None:
    draws = [SPEC.draw(f"plan-{n}", attempt) for n in range(1, 60) for attempt in (1, 2, 3)]
    again = [SPEC.draw(f"plan-{n}", attempt) for n in range(1, 60) for attempt in (1, 2, 3)]
    other = SPEC.model_copy(update={"key": "cities/two-cities#2"})
    elsewhere = [other.draw(f"plan-{n}", attempt) for n in range(1, 60) for attempt in (1, 2, 3)]
    assert draws == again
    assert draws != elsewhere


def test_about_the_rate_asked_of_calls_go_wrong_and_every_kind_is_drawn() -> None:
    draws = [SPEC.draw(f"plan-{n}", 1) for n in range(4000)]
    wrong = [kind for kind in draws if kind is not None]
    assert 0.27 < len(wrong) / len(draws) < 0.33
    assert set(wrong) == set(KINDS)


def test_a_rate_of_one_makes_every_call_go_wrong() -> None:
    always = SPEC.model_copy(update={"rate": 1.0})
    assert all(always.draw(f"plan-{n}", 1) is not None for n in range(200))


def test_a_chaos_provider_name_round_trips_and_an_empty_inner_is_the_default() -> None:
    name = ChaosSettings(rate=0.3).provider_for("cities/two-cities#1", None)
    assert name == "chaos:0.3:38:cities/two-cities#1:"
    assert is_chaos(name) and not is_chaos("scripted") and not is_chaos(None)
    assert ChaosSpec.parse(name) == SPEC.model_copy(update={"inner": None})
    assert ChaosSpec.parse(SPEC.name()) == SPEC


@pytest.mark.parametrize(
    "name", ["chaos:0.3:38", "chaos:2:38:k:", "chaos:x:1:k:", "chaos:0.3:-1:k:"]
)
def test_a_malformed_chaos_name_is_refused_with_its_form(name: str) -> None:
    with pytest.raises(ValueError, match="chaos"):
        ChaosSpec.parse(name)


def test_marks_are_read_back_in_order_and_unknown_names_are_ignored() -> None:
    text = f"{mark([ChaosKind.HTTP_500, ChaosKind.UNKNOWN_TOOL])} and [chaos: nonsense, cycle]"
    assert marked_kinds(text) == [ChaosKind.HTTP_500, ChaosKind.UNKNOWN_TOOL, ChaosKind.CYCLE]
    assert marked_kinds(None) == []


def test_a_run_records_each_attempt_s_marks_once_from_its_plan_or_its_failure() -> None:
    attempts = [
        AttemptRecord(attempt=1, plan=Plan(nodes=[]), planned_by="scripted:v1 [chaos: cycle]"),
        AttemptRecord(
            attempt=2,
            failure=[FailureContext(code="TIMEOUT", message="[chaos: http_429, timeout] x")],
        ),
        AttemptRecord(attempt=3, planned_by="scripted:v1"),
    ]

    class Recorded:
        attempt_history = attempts

    assert injected(Recorded()) == ["cycle", "http_429", "timeout"]  # type: ignore[arg-type]


def run(
    case: str,
    chaos: list[str],
    status: RunPhase | None = RunPhase.SUCCEEDED,
    tokens: int = 100,
    seconds: float = 1.0,
    repeat: int = 1,
) -> CaseResult:
    return CaseResult(
        case=case,
        scenario="cities",
        repeat=repeat,
        run_id=f"e.{case}.{repeat}",
        passed=status is RunPhase.SUCCEEDED,
        status=status,
        tokens=tokens,
        latency_seconds=seconds,
        chaos=chaos,
        ended_as_expected=status is RunPhase.SUCCEEDED,
    )


RESULTS = [
    run("cities/a", [], tokens=100, seconds=1.0, repeat=1),
    run("cities/a", [], tokens=120, seconds=3.0, repeat=2),
    run("cities/a", ["unknown_tool"], tokens=310, seconds=4.0, repeat=3),
    run("cities/a", ["http_500", "unknown_tool"], tokens=110, seconds=2.5, repeat=4),
    run("cities/b", ["cannot_plan"], status=RunPhase.FAILED_VALIDATION, repeat=1),
    run("cities/b", ["cannot_plan"], status=None, repeat=2),
    run("cities/c", ["http_429"], tokens=500, repeat=1),
]


def test_the_table_counts_injections_runs_recoveries_and_outcomes_by_phase() -> None:
    table = chaos_table(RESULTS, ChaosSettings(rate=0.3))
    rows = {row.kind: row for row in table.rows}
    assert [row.kind for row in table.rows] == [*(kind.value for kind in KINDS), ANY]
    assert (rows["unknown_tool"].injected, rows["unknown_tool"].runs) == (2, 2)
    assert rows["unknown_tool"].recovered == 2 and rows["unknown_tool"].recovery == 1.0
    assert rows["cannot_plan"].recovery == 0.0
    assert rows["cannot_plan"].outcomes == {"FAILED_VALIDATION": 1, NOT_ENDED: 1}
    assert rows["cycle"].runs == 0 and rows["cycle"].recovery is None
    assert (rows[ANY].injected, rows[ANY].runs, rows[ANY].recovered) == (6, 5, 3)
    assert table.clean_runs == 2


def test_recovery_costs_the_extra_over_the_same_case_s_median_run_without_chaos() -> None:
    rows = {row.kind: row for row in chaos_table(RESULTS, ChaosSettings(rate=0.3)).rows}
    # cities/a without chaos: a median of 110 tokens and 2.0 s
    assert rows["unknown_tool"].costed == 2
    assert rows["unknown_tool"].extra_tokens == pytest.approx((200 + 0) / 2)
    assert rows["unknown_tool"].extra_seconds == pytest.approx((2.0 + 0.5) / 2)
    assert rows["http_429"].costed == 0 and rows["http_429"].extra_tokens is None  # no clean c


def test_a_kind_recovered_less_often_than_in_the_baseline_is_a_regression() -> None:
    table = chaos_table(RESULTS, ChaosSettings(rate=0.3))
    assert recovery_regressions(table, {"unknown_tool": 1.0, "cannot_plan": 0.0}) == []
    dropped = recovery_regressions(table, {"cannot_plan": 0.5, "cycle": 1.0})
    assert dropped == ["cannot_plan: 0 of 2 run(s) recovered (0%), 50% in the baseline"]


def test_an_eval_with_chaos_reports_the_table_and_its_baseline_keeps_the_rates() -> None:
    request = EvalRequest(
        cases=[EvalCase(id="a", goal="g", scenario="cities")], chaos=ChaosSettings(rate=0.3)
    )
    report = build_report("eval-1", request, RESULTS, START, START)
    assert report.chaos is not None and report.chaos.settings.seed == 38
    baseline = Baseline.of(report)
    assert baseline.chaos == ChaosSettings(rate=0.3)
    assert baseline.recovery["unknown_tool"] == 1.0 and "cycle" not in baseline.recovery
    unchaotic = request.model_copy(update={"chaos": None})
    plain = build_report("eval-2", unchaotic, RESULTS, START, START)
    assert plain.chaos is None and Baseline.of(plain).recovery == {}
