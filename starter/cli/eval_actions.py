"""`harness eval`: start an eval suite (or take up one already started), show each case as it
finishes, then the report as a table, in JSON and as an HTML page, and hold it against a
baseline. The suite is a workflow, so the CLI can die and `--resume ID` reads the same suite."""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import CancelledError, TerminatedError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from durable_harness._client import runs
from durable_harness._client.input_files import check_writable, read_text_file
from durable_harness.client import QUERY_TIMEOUT
from harness.core.problems import article, describe_invalid
from harness.engine.contracts import EVAL_WORKFLOW, PROGRESS_QUERY
from harness.evals.chaos import ChaosSettings
from harness.evals.chaos_report import recovery_regressions
from harness.evals.eval_report import (
    Baseline,
    EvalProgress,
    EvalReport,
    EvalRequest,
    regressions,
    suite_problem,
)
from infra.settings import Settings
from infra.state import EVALS_FOLDER
from starter.cli.eval_files import load_cases
from starter.cli.eval_output import case_line, report_table
from starter.errors import EXIT_FAILED_RUN, CliError
from starter.output import note
from workflows import EvalSuiteWorkflow

POLL_SECONDS = 1.0
SILENT_POLLS = 15
"""After this many unanswered progress queries in a row, the CLI says what may be wrong."""


async def eval_suite(args: argparse.Namespace, settings: Settings) -> int:
    baseline = read_baseline(Path(args.baseline)) if args.baseline else None
    for flag, path in (("--out", args.out), ("--save-baseline", args.save_baseline)):
        if path is not None:
            check_writable(flag, Path(path), folder=flag == "--out")
    if args.out is None:
        check_writable("--out", settings.state_dir / EVALS_FOLDER, folder=True)
    if args.resume:
        if args.targets or args.case:
            raise CliError("--resume takes up a suite already started: give no cases")
        client = await runs.client_for(settings)
        eval_id = args.resume
    else:
        request = eval_request(args)
        eval_id = args.eval_id or f"eval-{uuid.uuid4().hex[:8]}"
        _check_size(request, eval_id)  # before any service is started
        if not args.no_start:
            from starter.cli.local_services import ensure_services

            await ensure_services(settings)
        client = await runs.client_for(settings)
        await start_eval(client, settings, request, eval_id)
        note(f"eval {eval_id}: {len(request.cases)} case(s) x {request.repeat}")
    report = await follow(client, eval_id, quiet=args.quiet)
    return finish(report, args, baseline, settings.state_dir / EVALS_FOLDER)


def eval_request(args: argparse.Namespace) -> EvalRequest:
    cases = load_cases(args.targets, args.case)
    try:
        return EvalRequest(
            cases=cases,
            repeat=args.repeat,
            concurrency=args.concurrency,
            provider=args.provider,
            chaos=ChaosSettings(rate=args.chaos, seed=args.chaos_seed) if args.chaos else None,
            case_timeout_seconds=args.case_timeout,
        )
    except ValidationError as error:
        raise CliError(
            f"cannot start this eval: {describe_invalid(error, whole='eval')}"
        ) from error


async def start_eval(
    client: Client, settings: Settings, request: EvalRequest, eval_id: str
) -> None:
    from starter.servers.dev_server import has_search_attributes

    _check_size(request, eval_id)
    try:
        request.search_attributes = await has_search_attributes(client, settings.temporal_namespace)
    except RPCError:  # a server that will not list them (no operator rights): runs go without
        request.search_attributes = False
    try:
        await client.start_workflow(
            EvalSuiteWorkflow.run,
            request,
            id=eval_id,
            task_queue=settings.task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            static_summary=f"eval: {len(request.cases)} case(s) x {request.repeat}",
        )
    except WorkflowAlreadyStartedError as error:
        raise CliError(f"an eval with id '{eval_id}' already exists; pick another --id") from error


def _check_size(request: EvalRequest, eval_id: str) -> None:
    too_large = suite_problem(request, eval_id)
    if too_large is not None:
        raise CliError(f"cannot start this eval: {too_large}")


async def follow(client: Client, eval_id: str, *, quiet: bool = False) -> EvalReport:
    """Each case's line as it finishes (stderr), then the suite's report."""
    handle: WorkflowHandle[Any, EvalReport] = client.get_workflow_handle(
        eval_id, result_type=EvalReport
    )
    await _check_is_eval(handle)
    shown, unanswered = 0, 0
    while True:
        closed = await _closed(handle)
        progress = await _progress(handle, shown)
        unanswered = 0 if progress is not None else unanswered + 1
        if unanswered == SILENT_POLLS:
            note(
                f"no worker has answered for eval {eval_id} yet: is a worker of this version "
                "running on the task queue (one that knows the HarnessEval workflow)? "
                "`make stop && make demo` restarts the local ones"
            )
        if progress is not None:
            for result in progress.finished:
                if not quiet:
                    note(case_line(result, progress.total))
            shown += len(progress.finished)
        if closed:
            break
        await asyncio.sleep(POLL_SECONDS)
    try:
        return await handle.result()
    except WorkflowFailureError as error:
        if isinstance(error.cause, CancelledError):
            raise CliError(f"eval {eval_id} was cancelled", EXIT_FAILED_RUN) from error
        if isinstance(error.cause, TerminatedError):
            raise CliError(f"eval {eval_id} was terminated", EXIT_FAILED_RUN) from error
        raise CliError(f"eval {eval_id} failed: {error.cause}", EXIT_FAILED_RUN) from error


async def _check_is_eval(handle: WorkflowHandle[Any, Any]) -> None:
    """`--resume` of a run's id (or any other workflow's) is one line, not a wait for ever."""
    kind = (await _describe(handle)).workflow_type
    if kind != EVAL_WORKFLOW:
        raise CliError(
            f"'{handle.id}' is {article(kind)} {kind} workflow, not an eval "
            "(a case's run is followed with `harness status`)"
        )


async def _closed(handle: WorkflowHandle[Any, Any]) -> bool:
    return (await _describe(handle)).status is not WorkflowExecutionStatus.RUNNING


async def _describe(handle: WorkflowHandle[Any, Any]) -> WorkflowExecutionDescription:
    try:
        return await handle.describe()
    except RPCError as error:
        if error.status is RPCStatusCode.NOT_FOUND:
            raise CliError(f"no eval with id '{handle.id}'") from error
        raise CliError(f"cannot read eval '{handle.id}': {error.message}") from error


async def _progress(handle: WorkflowHandle[Any, Any], after: int) -> EvalProgress | None:
    """The cases finished after the first `after`, or None when no worker answers."""
    try:
        progress: EvalProgress = await handle.query(
            PROGRESS_QUERY, after, result_type=EvalProgress, rpc_timeout=QUERY_TIMEOUT
        )
    except (RPCError, WorkflowQueryFailedError):
        return None  # no worker holds the suite right now: asked again
    return progress


def finish(
    report: EvalReport, args: argparse.Namespace, baseline: Baseline | None, evals: Path
) -> int:
    """The table, then the report in --out or else in `evals`/EVAL_ID (the state directory's)."""
    print(report.model_dump_json(indent=2) if args.json else report_table(report))
    out = Path(args.out) if args.out else evals / report.eval_id
    write_report(report, out)
    if args.save_baseline:
        path = Path(args.save_baseline)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(Baseline.of(report).model_dump_json(indent=2) + "\n", "utf-8")
        except OSError as error:
            raise CliError(f"cannot write baseline '{path}': {error.strerror or error}") from error
        note(f"baseline saved: {path}")
    if baseline is None:
        return 0 if all(result.passed for result in report.results) else EXIT_FAILED_RUN
    regressed = regressions(report, baseline)
    if regressed:
        note(f"REGRESSION: {len(regressed)} case(s) passed in the baseline and fail now:")
        for case in regressed:
            note(f"  {case}")
    if report.chaos and baseline.chaos and baseline.chaos != report.chaos.settings:
        made = baseline.chaos
        note(f"the baseline's recovery is of --chaos {made.rate:g} --chaos-seed {made.seed}")
    dropped = recovery_regressions(report.chaos, baseline.recovery) if report.chaos else []
    if dropped:
        note(f"REGRESSION: recovery from {len(dropped)} kind(s) of mistake fell:")
        for kind in dropped:
            note(f"  {kind}")
    if regressed or dropped:
        return EXIT_FAILED_RUN
    note(f"no regression against {args.baseline}")
    return 0


def write_report(report: EvalReport, out: Path) -> None:
    from starter.pages.eval_page import eval_page

    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        (out / "report.html").write_text(eval_page(report), encoding="utf-8")
    except OSError as error:
        raise CliError(f"cannot write the report to '{out}': {error.strerror or error}") from error
    note(f"report: {out / 'report.json'} and {out / 'report.html'}")


def read_baseline(path: Path) -> Baseline:
    try:
        return Baseline.model_validate_json(read_text_file(path, f"baseline '{path}'"))
    except (ValidationError, json.JSONDecodeError) as error:
        raise CliError(f"'{path}' is not a baseline saved by --save-baseline") from error
