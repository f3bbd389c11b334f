"""The eval report as text and as a page: every unmet expectation is shown, escaped on the page,
and pass@k and pass^k appear only when cases ran more than once."""

from __future__ import annotations

from harness.engine.run import RunPhase
from harness.evals.eval_case import EvalCase
from harness.evals.eval_report import CaseResult, EvalReport, EvalRequest, build_report
from starter.cli.eval_output import report_table
from starter.pages.eval_page import eval_page
from tests.factories import START


def report(repeat: int = 1) -> EvalReport:
    results = [
        CaseResult(
            case="cities/odd",
            scenario="cities",
            repeat=k,
            run_id=f"e.cities.odd.{k}",
            passed=False,
            unmet=["the report does not mention '<script>'"],
            status=RunPhase.FAILED_EXECUTION,
        )
        for k in range(1, repeat + 1)
    ]
    request = EvalRequest(cases=[EvalCase(id="odd", goal="g", scenario="cities")], repeat=repeat)
    return build_report("eval-1", request, results, START, START)


def test_the_table_lists_each_unmet_expectation_under_its_case() -> None:
    table = report_table(report())
    assert "cities/odd  FAIL    FAILED_EXECUTION" in table
    assert "    - the report does not mention '<script>'" in table
    assert "pass@k" not in table


def test_the_summary_counts_the_runs_of_each_ending() -> None:
    assert "endings: FAILED_EXECUTION 1" in report_table(report())


def test_repeated_cases_show_pass_at_k_and_pass_all_k() -> None:
    table = report_table(report(repeat=2))
    assert "cities/odd #2" in table and "pass@k  pass^k" in table


def test_the_page_escapes_what_runs_wrote_and_carries_its_chart_inside() -> None:
    page = eval_page(report())
    assert "&lt;script&gt;" in page and "<script>" not in page
    assert '<img src="data:image/png;base64,' in page
