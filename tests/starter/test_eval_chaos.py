"""`harness eval cities --chaos 0.3` as CI runs it: a real CLI process, a real dev server, the
offline provider wrapped in the chaos provider. It prints the recovery table, gives the same
table every time (a fixed seed), and holds the recovery baseline committed in the repository:
a kind of mistake whose runs recover less often than there fails the eval."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from temporalio.client import Client

from harness.engine.run import RunPhase
from harness.evals.chaos import ChaosSettings
from harness.evals.eval_case import EvalCase
from harness.evals.eval_report import Baseline, CaseResult, EvalReport, EvalRequest, build_report
from starter.cli.eval_actions import finish
from starter.errors import EXIT_FAILED_RUN
from starter.pages.eval_page import eval_page
from tests.factories import START
from tests.starter.test_cli import harness
from tests.support import running_worker

CHAOS_BASELINE = Path(__file__).parents[2] / "scenarios" / "chaos_baseline.json"
CHAOS_EVAL = (
    "eval", "cities", "--chaos", "0.3", "--repeat", "6", "--concurrency", "6",
    "--case", "cities/two-cities", "--case", "cities/three-cities",
    "--case", "cities/question-wording", "--case", "cities/unknown-atlantis-replan",
)  # fmt: skip
"""The cases CI runs with chaos (a few, repeated: each repeat draws its own mistakes);
`python -m tests.record_chaos_baseline` records their baseline."""


def report_in(out: Path) -> EvalReport:
    return EvalReport.model_validate_json((out / "report.json").read_text())


@pytest.mark.requires_local_server("eval runs are child workflows in real time")
@pytest.mark.timeout(600)
async def test_chaos_eval_prints_the_recovery_table_and_holds_the_committed_baseline(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    async with running_worker(client, task_queue):
        code, stdout, stderr = await harness(
            *CHAOS_EVAL, "--no-start", "--quiet", "--out", str(out),
            "--baseline", str(CHAOS_BASELINE), client=client, task_queue=task_queue,
        )  # fmt: skip
    assert code == 0, stderr[-3000:]
    assert "chaos 0.3 (seed 38): recovery from injected mistakes" in stdout
    report = report_in(out)
    assert report.chaos is not None
    baseline = Baseline.model_validate_json(CHAOS_BASELINE.read_text())
    assert baseline.recovery, "the committed baseline holds recovery rates"
    assert {row.kind for row in report.chaos.rows if row.runs} == set(baseline.recovery)
    assert json.loads(CHAOS_BASELINE.read_text())["chaos"] == {"rate": 0.3, "seed": 38}


def chaos_report() -> EvalReport:
    def result(repeat: int, chaos: list[str], status: RunPhase) -> CaseResult:
        return CaseResult(
            case="cities/a",
            scenario="cities",
            repeat=repeat,
            run_id=f"e.cities.a.{repeat}",
            passed=status is RunPhase.SUCCEEDED,
            status=status,
            chaos=chaos,
            ended_as_expected=status is RunPhase.SUCCEEDED,
        )

    request = EvalRequest(
        cases=[EvalCase(id="a", goal="g", scenario="cities")], chaos=ChaosSettings(rate=0.3)
    )
    results = [
        result(1, [], RunPhase.SUCCEEDED),
        result(2, ["http_500"], RunPhase.SUCCEEDED),
        result(3, ["cut_off"], RunPhase.FAILED_VALIDATION),
    ]
    return build_report("eval-1", request, results, START, START)


def arguments(out: Path, *, as_json: bool = False) -> argparse.Namespace:
    return argparse.Namespace(out=str(out), save_baseline=None, json=as_json, baseline="b.json")


def test_recovery_that_falls_below_the_baseline_fails_the_eval_and_names_the_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = chaos_report()
    kept = Baseline.of(report)
    assert finish(report, arguments(tmp_path / "kept"), kept, tmp_path) == 0
    better = kept.model_copy(update={"recovery": {**kept.recovery, "cut_off": 1.0}})
    assert finish(report, arguments(tmp_path / "fell"), better, tmp_path) == (EXIT_FAILED_RUN)
    err = capsys.readouterr().err
    assert "REGRESSION: recovery from 1 kind(s) of mistake fell:" in err
    assert "  cut_off: 0 of 1 run(s) recovered (0%), 100% in the baseline" in err


def test_json_prints_the_report_with_its_recovery_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = chaos_report()
    finish(report, arguments(tmp_path / "out", as_json=True), None, tmp_path)
    printed = EvalReport.model_validate_json(capsys.readouterr().out)
    assert printed.chaos == report.chaos


def test_the_report_page_shows_the_recovery_table() -> None:
    page = eval_page(chaos_report())
    assert "Recovery from injected mistakes (chaos 0.3, seed 38)" in page
    assert "<tr><td>cut_off</td>" in page and "FAILED_VALIDATION 1" in page
