"""`harness eval cities --chaos 0.3` as CI runs it: a real CLI process, a real dev server, the
offline provider wrapped in the chaos provider. It prints the recovery table, gives the same
table every time (a fixed seed), and holds the recovery baseline committed in the repository:
a kind of mistake whose runs recover less often than there fails the eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import Client

from harness.evals.eval_report import Baseline, EvalReport
from tests.starter.test_cli import harness
from tests.support import running_worker

pytestmark = pytest.mark.requires_local_server("eval runs are child workflows in real time")

CHAOS_BASELINE = Path(__file__).parents[2] / "scenarios" / "chaos_baseline.json"
CHAOS_EVAL = (
    "eval", "cities", "--chaos", "0.3", "--repeat", "6", "--concurrency", "6",
    "--case", "cities/two-cities", "--case", "cities/three-cities",
    "--case", "cities/question-wording", "--case", "cities/unknown-atlantis-replan",
)  # fmt: skip
"""The cases CI runs with chaos (a few, repeated: each repeat draws its own mistakes). The
command that records the baseline: `harness eval` with these arguments and
`--save-baseline scenarios/chaos_baseline.json`."""


def report_in(out: Path) -> EvalReport:
    return EvalReport.model_validate_json((out / "report.json").read_text())


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
    print(stdout, stderr)
    assert code == 0, stderr[-3000:]
    assert "chaos 0.3 (seed 38): recovery from injected mistakes" in stdout
    report = report_in(out)
    assert report.chaos is not None
    baseline = Baseline.model_validate_json(CHAOS_BASELINE.read_text())
    assert baseline.recovery, "the committed baseline holds recovery rates"
    assert {row.kind for row in report.chaos.rows if row.runs} == set(baseline.recovery) - {"any"}
    assert json.loads(CHAOS_BASELINE.read_text())["chaos"] == {"rate": 0.3, "seed": 38}
