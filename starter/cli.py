"""The `harness` command: start runs, show status, validate plans, list tools, run a server."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.budget import BudgetLimits
from harness.deliveries import DeliverRequest
from harness.faults import FaultSpec
from harness.run import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_REPLANS,
    RunPhase,
    RunRequest,
    RunResult,
)
from harness.validation import ValidationReport, validate_plan
from infra.client import connect
from infra.process import exit_now
from infra.settings import Settings, SettingsError
from scenarios import scenario_names
from starter import deliveries, history, output, runs
from starter.charts import write_run_report
from starter.dev_server import DEFAULT_DB, dev_server_command, register_search_attributes
from starter.errors import EXIT_FAILED_RUN, EXIT_UNAVAILABLE, CliError
from starter.plan_files import load_plan, load_scenario


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be more than 0")
    return value


def _fault(text: str) -> FaultSpec:
    try:
        return FaultSpec.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must not be negative")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness", description="Turn a goal into a verified answer, durably, on Temporal."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    scenarios = ", ".join(scenario_names())

    run = commands.add_parser("run", help="start a run for a goal and wait for its report")
    run.add_argument("goal", help='what to achieve, e.g. "Compare Paris, Tokyo and New York"')
    run.add_argument("--scenario", default="cities", help=f"tool pack ({scenarios})")
    run.add_argument("--id", dest="run_id", help="run id (default: a new run-… id)")
    run.add_argument("--plan", help="a plan JSON file to run instead of asking the planner")
    run.add_argument("--session", help="session id carried into the trace")
    run.add_argument(
        "--provider",
        metavar="NAME",
        help="LLM provider for this run: scripted, anthropic or openai "
        "(default: the worker's HARNESS_LLM_PROVIDER)",
    )
    run.add_argument("--max-tokens", type=_positive, help="token budget (LLM input + output)")
    run.add_argument("--max-tool-calls", type=_positive, help="tool-call budget, retries included")
    run.add_argument("--max-seconds", type=_positive_float, help="wall-clock budget")
    run.add_argument("--max-cost", type=_positive_float, help="estimated cost budget, USD")
    run.add_argument(
        "--fault",
        action="append",
        default=[],
        type=_fault,
        metavar="TOOL[:ARG]=CODE[*N]",
        help="make matching nodes fail N times with CODE (tests and demos)",
    )
    run.add_argument("--max-concurrency", type=_positive, default=DEFAULT_MAX_CONCURRENCY)
    run.add_argument("--max-replans", type=_non_negative, default=DEFAULT_MAX_REPLANS)
    run.add_argument(
        "--no-ask", action="store_true", help="fail instead of asking when the goal lacks facts"
    )
    run.add_argument("--no-wait", action="store_true", help="print the run id and return")
    run.add_argument("--json", action="store_true", help="print the RunResult as JSON")

    status = commands.add_parser("status", help="a run's phase and node statuses")
    status.add_argument("run_id")
    status.add_argument("--json", action="store_true")

    trace = commands.add_parser("trace", help="a run's trace, rebuilt from its workflow history")
    trace.add_argument("run_id")
    trace_format = trace.add_mutually_exclusive_group()
    trace_format.add_argument("--json", action="store_true", help="one JSON array")
    trace_format.add_argument("--jsonl", action="store_true", help="one JSON object per line")

    waits = commands.add_parser("waits", help="pending waits of a run, or of every run")
    waits.add_argument("run_id", nargs="?")
    waits.add_argument("--json", action="store_true")

    approve = commands.add_parser("approve", help="approve (or --reject) an APPROVAL wait")
    approve.add_argument("run_id")
    approve.add_argument("wait_id")
    approve.add_argument("--actor", required=True, help="human:NAME or system:NAME")
    approve.add_argument("--reject", action="store_true")
    approve.add_argument("--comment")

    answer = commands.add_parser("answer", help="answer a USER_INPUT wait")
    answer.add_argument("run_id")
    answer.add_argument("wait_id")
    answer.add_argument("text")
    answer.add_argument("--actor", default="human:user")

    deliver = commands.add_parser("deliver", help="deliver an async result, event or reconcile")
    deliver.add_argument("run_id")
    target = deliver.add_mutually_exclusive_group(required=True)
    target.add_argument("wait_id", nargs="?")
    target.add_argument("--operation", help="the operation id instead of a wait id")
    target.add_argument("--event", help="the event name instead of a wait id")
    deliver.add_argument("--data", required=True, help="JSON, or @FILE holding JSON")
    deliver.add_argument("--actor", default="system:cli")

    cancel = commands.add_parser("cancel", help="cancel a run; finished results are kept")
    cancel.add_argument("run_id")
    cancel.add_argument("--reason", default="cancelled from the CLI")
    cancel.add_argument("--actor", default="human:cli")

    report = commands.add_parser("report", help="charts and an HTML page for a run")
    report.add_argument("run_id")
    report.add_argument("--out", type=Path, required=True, help="output folder")

    validate = commands.add_parser("validate", help="check a plan file offline")
    validate.add_argument("plan_file")
    validate.add_argument("--scenario", required=True, help=f"tool pack ({scenarios})")
    validate.add_argument("--json", action="store_true")

    tools = commands.add_parser("tools", help="a scenario's tool catalog")
    tools.add_argument("--scenario", default="cities", help=f"tool pack ({scenarios})")
    tools.add_argument("--json", action="store_true")

    server = commands.add_parser("server", help="run the embedded Temporal dev server")
    server.add_argument("--port", type=_positive, default=7233)
    server.add_argument("--ui-port", type=_positive, default=8233)
    server.add_argument("--db", type=Path, default=DEFAULT_DB, help="SQLite file for persistence")
    return parser


def run_request(args: argparse.Namespace, settings: Settings) -> RunRequest:
    """The RunRequest that `harness run` starts, from its parsed arguments and the defaults."""
    limits = BudgetLimits(
        max_tokens=args.max_tokens or settings.max_tokens,
        max_tool_calls=args.max_tool_calls or settings.max_tool_calls,
        max_seconds=args.max_seconds or settings.max_seconds,
        max_cost_usd=args.max_cost or settings.max_cost_usd,
    )
    return RunRequest(
        goal=args.goal,
        scenario=load_scenario(args.scenario).name,
        session_id=args.session,
        max_concurrency=args.max_concurrency,
        max_replans=args.max_replans,
        plan=load_plan(args.plan) if args.plan else None,
        provider=args.provider,
        limits=limits,
        faults=args.fault,
        ask_user=not args.no_ask,
    )


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    request = run_request(args, settings)
    client = await runs.client_for(settings)
    run_id = args.run_id or runs.new_run_id()
    await runs.start_run(client, settings, request, run_id)
    if args.no_wait:
        print(run_id)
        return 0
    output.note(
        f"run {run_id} started · {settings.ui_url}/namespaces/"
        f"{settings.temporal_namespace}/workflows/{run_id}"
    )
    if not await runs.has_worker(client, settings):
        output.note(
            f"no worker is polling task queue '{settings.task_queue}' yet; "
            "start one with `python -m worker` (the run waits for it)"
        )
    result = await runs.wait_for_result(client, run_id)
    if args.json:
        output.emit_json(result.model_dump(mode="json"))
    else:
        output.print_result(result)
    return 0 if result.status is RunPhase.SUCCEEDED else EXIT_FAILED_RUN


async def _status(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    found = await runs.run_status(client, args.run_id)
    if args.json:
        output.emit_json(found.model_dump(mode="json"))
    elif isinstance(found, RunResult):
        output.print_result(found)
    else:
        output.print_status(found)
    return 0


async def _trace(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    replayed = await history.trace_of(client, args.run_id)
    events = [event.model_dump(mode="json") for event in replayed.trace]
    if args.json:
        output.emit_json(events)
    elif args.jsonl:
        for event in events:
            print(json.dumps(event, ensure_ascii=False))
    else:
        print("\n".join(history.trace_table(replayed.trace)))
        print(f"run {args.run_id}: {replayed.status.phase.value}, {len(events)} events")
    return 0


async def _waits(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    found = await deliveries.pending_waits(client, args.run_id)
    if args.json:
        output.emit_json(
            {rid: [w.model_dump(mode="json") for w in waits] for rid, waits in found.items()}
        )
        return 0
    lines = [deliveries.describe_wait(rid, wait) for rid, waits in found.items() for wait in waits]
    print("\n".join(lines) if lines else "no pending waits")
    return 0


async def _deliver(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    if args.command == "approve":
        receipt = await deliveries.approve(
            client, args.run_id, args.wait_id, args.actor, args.reject, args.comment
        )
    elif args.command == "answer":
        receipt = await deliveries.answer(client, args.run_id, args.wait_id, args.text, args.actor)
    else:
        request = DeliverRequest(
            wait_id=args.wait_id,
            operation_id=args.operation,
            event=args.event,
            data=deliveries.read_data(args.data),
            actor=args.actor,
        )
        receipt = await deliveries.deliver(client, args.run_id, request)
    verdict = "accepted" if receipt.accepted else "refused"
    duplicate = " (duplicate, ignored)" if receipt.duplicate else ""
    print(f"{verdict}{duplicate}: {receipt.reason}")
    return 0 if receipt.accepted else EXIT_FAILED_RUN


async def _cancel(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    await deliveries.cancel(client, args.run_id, args.reason, args.actor)
    print(f"cancellation requested for run {args.run_id}")
    return 0


async def _report(args: argparse.Namespace, settings: Settings) -> int:
    client = await runs.client_for(settings)
    replayed = await history.trace_of(client, args.run_id)
    finished = await runs.finished_result(client, args.run_id)
    files = write_run_report(
        args.out,
        trace=replayed.trace,
        plan=replayed.status.plan,
        nodes=finished.nodes if finished else replayed.status.nodes,
        usage_by_role=finished.usage_by_role if finished else {},
        report=finished.report if finished else None,
        title=f"run {args.run_id}: {replayed.status.phase.value}",
    )
    for path in (files.timeline_png, files.pressure_png, files.tokens_png, files.plan_png):
        print(path)
    print(files.html)
    return 0


def _validate(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario)
    plan = load_plan(args.plan_file)
    issues = validate_plan(plan, scenario.catalog())
    if args.json:
        output.emit_json(ValidationReport(valid=not issues, issues=issues).model_dump(mode="json"))
    else:
        output.print_issues(issues)
    return 0 if not issues else EXIT_FAILED_RUN


def _tools(args: argparse.Namespace) -> int:
    catalog = load_scenario(args.scenario).catalog()
    if args.json:
        output.emit_json(catalog.model_dump(mode="json"))
    else:
        output.print_catalog(catalog)
    return 0


def _server(args: argparse.Namespace, settings: Settings) -> int:
    command = dev_server_command(args.port, args.ui_port, args.db, settings.temporal_namespace)
    output.note(
        f"Temporal dev server on 127.0.0.1:{args.port}, UI on http://localhost:{args.ui_port}, "
        f"data in {args.db} (Ctrl-C stops it)"
    )
    server = subprocess.Popen(command)
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())
    try:
        address = dataclasses.replace(settings, temporal_address=f"127.0.0.1:{args.port}")
        asyncio.run(_register_when_up(address, server))
        return server.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(server)


def _stop(server: subprocess.Popen[bytes]) -> None:
    """Never leave the dev server behind: terminate, then kill if it will not stop."""
    if server.poll() is None:
        server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


async def _register_when_up(settings: Settings, server: subprocess.Popen[bytes]) -> None:
    for _ in range(120):
        if server.poll() is not None:
            raise CliError(f"the dev server exited with code {server.returncode}", 1)
        try:
            client = await connect(settings)
        except RuntimeError:
            await asyncio.sleep(0.5)
            continue
        added = await register_search_attributes(client, settings.temporal_namespace)
        if added:
            output.note(f"registered search attributes: {', '.join(added)}")
        return
    raise CliError("the dev server did not answer within 60 s", EXIT_UNAVAILABLE)


def dispatch(args: argparse.Namespace) -> int:
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        raise CliError(str(error)) from error
    if args.command == "run":
        return asyncio.run(_run(args, settings))
    if args.command == "status":
        return asyncio.run(_status(args, settings))
    if args.command == "trace":
        return asyncio.run(_trace(args, settings))
    if args.command == "waits":
        return asyncio.run(_waits(args, settings))
    if args.command in ("approve", "answer", "deliver"):
        return asyncio.run(_deliver(args, settings))
    if args.command == "cancel":
        return asyncio.run(_cancel(args, settings))
    if args.command == "report":
        return asyncio.run(_report(args, settings))
    if args.command == "validate":
        return _validate(args)
    if args.command == "tools":
        return _tools(args)
    return _server(args, settings)


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        code = dispatch(args)
    except CliError as error:
        print(f"harness: {error.message}", file=sys.stderr)
        code = error.exit_code
    except KeyboardInterrupt:
        print("harness: interrupted; the run goes on in Temporal", file=sys.stderr)
        code = 130
    exit_now(code)
