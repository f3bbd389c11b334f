"""`harness eval` as a user runs it: a real CLI process, a real dev server, real worker(s).

A small suite reports each case's verdict with every unmet expectation; scripted approvals and
answers reach the run through its own updates; a wait no case scripts fails the case and the
run ends Canceled; a regression against a baseline exits non-zero and names the case; a worker
killed with SIGKILL mid-eval loses no finished case; and the offline suite of every scenario
holds the baseline committed in the repository."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError

from activities.llm import ProviderRegistry, ScriptedProvider
from harness.engine.contracts import EVAL_WORKFLOW, PROGRESS_QUERY
from harness.engine.run import RunRequest
from harness.evals.eval_report import Baseline, CaseResult, EvalProgress, EvalReport, EvalRequest
from harness.waits.wait_book import Wait
from starter.cli.eval_files import load_cases
from tests.payment_service import payment_service
from tests.starter.test_cli import harness
from tests.support import execute_run, history_events, running_worker
from tests.worker_processes import workers
from worker.app import build_worker
from workflows import EvalSuiteWorkflow

pytestmark = pytest.mark.requires_local_server("eval runs are child workflows in real time")

COMMITTED_BASELINE = Path(__file__).parents[2] / "scenarios" / "eval_baseline.json"

SMALL_SUITE = """
scenario: cities
cases:
  - id: two-cities
    goal: Compare Paris and Tokyo
    tags: [ordinary]
    expect: {mentions: [Paris, Tokyo], max_tool_calls: 10, max_replans: 0}
  - id: atlantis
    goal: Compare Paris, Atlantis and Tokyo
    tags: [unknown-entity]
    expect: {min_replans: 1, error_codes: [MISSING_INFO], mentions: [Atlantis]}
  - id: broken-expectation
    goal: Compare Paris and Tokyo
    expect: {mentions: [Berlin], max_tool_calls: 1}
"""

APPROVALS = """
scenario: synthetic
cases:
  - id: approved
    goal: change prod
    options:
      plan: &change-prod {nodes: [
        {id: change, tool: side_effect, arguments: [{name: target, kind: LITERAL, value: prod}]},
        {id: final, tool: collect, deps: [change],
         arguments: [{name: inputs, kind: NODE_RESULT, node_id: change}]}]}
      approvals: [{decision: approve, comment: looks right}]
    expect: {waits: [APPROVAL]}
  - id: rejected
    goal: change prod
    options:
      plan: *change-prod
      approvals: [{decision: reject, actor: "human:ops", comment: not today}]
    expect: {status: FAILED_EXECUTION, error_codes: [POLICY_VIOLATION]}
  - id: unscripted
    goal: change prod
    options: {plan: *change-prod}
    expect: {}
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def report_in(out: Path) -> EvalReport:
    return EvalReport.model_validate_json((out / "report.json").read_text())


async def test_a_small_suite_reports_each_case_and_a_broken_expectation_with_its_reasons(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    cases = write(tmp_path, "cases.yaml", SMALL_SUITE)
    out = tmp_path / "out"
    async with running_worker(client, task_queue):
        code, stdout, stderr = await harness(
            "eval", cases, "--no-start", "--out", str(out), client=client, task_queue=task_queue
        )
    assert code == 1, stderr
    report = report_in(out)
    verdicts = {result.case: result.passed for result in report.results}
    assert verdicts == {
        "cities/two-cities": True,
        "cities/atlantis": True,
        "cities/broken-expectation": False,
    }
    broken = next(r for r in report.results if r.case == "cities/broken-expectation")
    assert broken.unmet[0] == "the report does not mention 'Berlin'"
    assert broken.unmet[1].startswith("tool calls ") and "expected at most 1" in broken.unmet[1]
    assert "    - the report does not mention 'Berlin'" in stdout
    assert "cities          3       2        67%" in stdout
    assert "FAIL  cities/broken-expectation" in stderr
    page = (out / "report.html").read_text()
    assert "data:image/png;base64," in page and "cities/broken-expectation" in page
    assert report.overall.tokens == sum(result.tokens for result in report.results) > 0


async def test_scripted_approvals_reach_the_run_and_an_unscripted_wait_fails_its_case(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    cases = write(tmp_path, "approvals.yaml", APPROVALS)
    out = tmp_path / "out"
    async with running_worker(client, task_queue):
        code, _, stderr = await harness(
            "eval", cases, "--no-start", "--out", str(out), client=client, task_queue=task_queue
        )
        results = {result.case: result for result in report_in(out).results}
        approved = await client.get_workflow_handle(results["synthetic/approved"].run_id).query(
            "waits", result_type=list[Wait]
        )
    assert code == 1, stderr
    assert results["synthetic/approved"].passed, results["synthetic/approved"].unmet
    assert results["synthetic/rejected"].passed, results["synthetic/rejected"].unmet
    unscripted = results["synthetic/unscripted"]
    assert not unscripted.passed and unscripted.status is not None
    assert unscripted.status.value == "CANCELLED"
    assert "waits for APPROVAL 'approve-change'" in unscripted.unmet[0]
    assert "scripts no response" in unscripted.unmet[0]
    run = await client.get_workflow_handle(unscripted.run_id).describe()
    assert run.status is WorkflowExecutionStatus.CANCELED
    assert approved[0].delivered_by == "system:eval"


async def test_a_regression_against_a_baseline_exits_non_zero_and_names_the_case(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    cases = write(tmp_path, "cases.yaml", SMALL_SUITE)
    saved = tmp_path / "baseline.json"
    async with running_worker(client, task_queue):
        code, _, stderr = await harness(
            "eval", cases, "--no-start", "--out", str(tmp_path / "first"),
            "--save-baseline", str(saved), client=client, task_queue=task_queue,
        )  # fmt: skip
        assert code == 1 and "baseline saved" in stderr
        known = await harness(
            "eval", cases, "--no-start", "--out", str(tmp_path / "second"),
            "--baseline", str(saved), client=client, task_queue=task_queue,
        )  # fmt: skip
        baseline = Baseline.model_validate_json(saved.read_text())
        baseline.cases["cities/broken-expectation"] = True  # as if it had passed before
        saved.write_text(baseline.model_dump_json())
        regressed = await harness(
            "eval", cases, "--no-start", "--out", str(tmp_path / "third"),
            "--baseline", str(saved), client=client, task_queue=task_queue,
        )  # fmt: skip
    assert known[0] == 0, known[2]  # a case that failed before too is known, not a regression
    assert "no regression against" in known[2]
    assert regressed[0] == 1
    assert "REGRESSION: 1 case(s) passed in the baseline and fail now:" in regressed[2]
    assert "  cities/broken-expectation" in regressed[2]


@pytest.mark.timeout(300)
@pytest.mark.waits_out_timeouts
async def test_killing_the_worker_mid_eval_loses_no_finished_case(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    cases = load_cases([write(tmp_path, "cases.yaml", SMALL_SUITE)])
    request = EvalRequest(cases=cases, concurrency=1, repeat=2)
    async with (
        payment_service(client, tmp_path) as service,
        workers(client, task_queue, service, tmp_path / "workers.log") as pool,
    ):
        first = await pool.start()
        handle = await client.start_workflow(
            EvalSuiteWorkflow.run, request, id=f"eval-kill-{task_queue}", task_queue=task_queue
        )
        before = await _finished_at_least(client, handle.id, 2)
        pool.kill(first)
        await pool.start()
        code, stdout, stderr = await harness(
            "eval", "--resume", handle.id, "--no-start", "--out", str(tmp_path / "out"),
            client=client, task_queue=task_queue,
        )  # fmt: skip
    report = report_in(tmp_path / "out")
    assert code == 1, stderr  # broken-expectation fails, as it should
    assert len(report.results) == 6
    kept = {(r.case, r.repeat): r for r in report.results}
    for finished in before:
        assert kept[(finished.case, finished.repeat)] == finished
    events = await history_events(client, handle.id)
    started = [
        e
        for e in events
        if e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    ]
    assert len(started) == 6  # no case ran twice
    assert "cities/two-cities #2" in stdout


async def _finished_at_least(client: Client, eval_id: str, count: int) -> list[CaseResult]:
    handle = client.get_workflow_handle(eval_id)
    for _ in range(600):
        progress: EvalProgress = await handle.query(PROGRESS_QUERY, result_type=EvalProgress)
        if len(progress.finished) >= count:
            return progress.finished
        await asyncio.sleep(0.1)
    raise AssertionError(f"eval {eval_id} never finished {count} case(s)")


@pytest.mark.timeout(900)
async def test_the_offline_suite_holds_the_baseline_committed_in_the_repository(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    async with (
        payment_service(client, tmp_path) as service,
        build_worker(
            client,
            task_queue,
            ProviderRegistry.always(ScriptedProvider()),
            services={"payments": service.client},
        ),
    ):
        code, _, stderr = await harness(
            "eval", "cities", "games", "incidents", "refunds", "repo", "--no-start",
            "--out", str(out), "--baseline", str(COMMITTED_BASELINE),
            client=client, task_queue=task_queue,
        )  # fmt: skip
    assert code == 0, stderr[-3000:]
    report = report_in(out)
    baseline = Baseline.model_validate_json(COMMITTED_BASELINE.read_text())
    assert set(baseline.cases) == {result.case for result in report.results}
    assert {summary.scenario for summary in report.scenarios} == {
        "cities",
        "games",
        "incidents",
        "refunds",
        "repo",
    }
    assert json.loads((out / "report.json").read_text())["overall"]["runs"] >= 80


async def test_a_suite_past_its_history_limit_continues_as_new_and_loses_no_case(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    cases = load_cases([write(tmp_path, "cases.yaml", SMALL_SUITE)])
    request = EvalRequest(cases=cases, concurrency=1, history_events_before_new_run=20)
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            EvalSuiteWorkflow.run, request, id=f"eval-long-{task_queue}", task_queue=task_queue
        )
        report = await handle.result()
    assert sorted(result.case for result in report.results) == sorted(c.key for c in cases)
    first = client.get_workflow_handle(handle.id, run_id=handle.first_execution_run_id)
    events = [event async for event in first.fetch_history_events()]
    assert events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    assert report.started_at < report.finished_at


async def test_an_eval_started_with_an_input_that_is_not_an_eval_request_fails_with_the_reason(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            EVAL_WORKFLOW, {"cases": []}, id=f"eval-bad-{task_queue}", task_queue=task_queue
        )
        with pytest.raises(WorkflowFailureError) as failed:
            await handle.result()
    assert "not an EvalRequest: cases: List should have at least 1 item" in str(failed.value.cause)


SLOW = """
scenario: synthetic
cases:
  - id: slow-1
    goal: wait a while
    options:
      plan: &slow {nodes: [
        {id: wait, tool: delay, arguments: [{name: ms, kind: LITERAL, value: 20000}]},
        {id: final, tool: collect, deps: [wait],
         arguments: [{name: inputs, kind: NODE_RESULT, node_id: wait}]}]}
  - {id: slow-2, goal: wait a while, options: {plan: *slow}}
  - {id: slow-3, goal: wait a while, options: {plan: *slow}}
"""


async def test_a_cancelled_eval_ends_canceled_and_starts_no_new_case(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    cases = load_cases([write(tmp_path, "slow.yaml", SLOW)])
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            EvalSuiteWorkflow.run,
            EvalRequest(cases=cases, concurrency=1),
            id=f"eval-cancel-{task_queue}",
            task_queue=task_queue,
        )
        child_started = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
        for _ in range(200):
            events = await history_events(client, handle.id)
            if any(event.event_type == child_started for event in events):
                break
            await asyncio.sleep(0.1)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        run = client.get_workflow_handle(f"{handle.id}.synthetic.slow-1.1")
        for _ in range(300):  # the run under way is cancelled too, through its heartbeats
            if (await run.describe()).status is not WorkflowExecutionStatus.RUNNING:
                break
            await asyncio.sleep(0.1)
        assert (await run.describe()).status is WorkflowExecutionStatus.CANCELED
    assert (await handle.describe()).status is WorkflowExecutionStatus.CANCELED
    events = await history_events(client, handle.id)
    assert sum(event.event_type == child_started for event in events) == 1


async def test_resume_of_a_run_or_of_nothing_is_one_line(client: Client, task_queue: str) -> None:
    async with running_worker(client, task_queue):
        run = await execute_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
        of_run = await harness(
            "eval", "--resume", run.run_id, "--no-start", client=client, task_queue=task_queue
        )
        of_nothing = await harness(
            "eval", "--resume", "eval-none", "--no-start", client=client, task_queue=task_queue
        )
    assert of_run[0] == 2 and of_run[2].strip() == (
        f"harness: '{run.run_id}' is an AgentRun workflow, not an eval "
        "(a case's run is followed with `harness status`)"
    )
    assert of_nothing[0] == 2 and of_nothing[2].strip() == "harness: no eval with id 'eval-none'"
