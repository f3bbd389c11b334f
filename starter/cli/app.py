"""The `harness` command: start runs, show status, validate plans, list tools, run a server."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.core.limits import MAX_NAME_CHARS
from harness.engine.contracts import PROVIDER_NAMES
from harness.engine.faults import FaultSpec
from harness.engine.run import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_REPLANS,
    MAX_MEMORY_CHARS,
    MIN_MEMORY_CHARS,
)
from harness.engine.validation import DEFAULT_MAX_NODES
from harness.evals.eval_report import DEFAULT_CASE_TIMEOUT_SECONDS, DEFAULT_EVAL_CONCURRENCY
from harness.recall.memory_context import DEFAULT_BUDGET_CHARS
from infra.process import exit_now
from scenarios import scenario_names
from starter.cli.cli_handlers import handled
from starter.cli.cli_parser import HarnessParser, package_version, parse_command_line
from starter.cli.memory_cli import add_memory_commands
from starter.cli.rules_cli import add_rules_commands
from starter.cli.task_cli import add_task_commands, scope_name
from starter.cli_connection import OFFLINE_COMMANDS, add_connection_flags, each_command
from starter.errors import CliError


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
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be more than 0")
    return value


def _fault(text: str) -> FaultSpec:
    try:
        return FaultSpec.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _provider(text: str) -> str:
    if text not in PROVIDER_NAMES:
        raise argparse.ArgumentTypeError(
            f"unknown provider {text!r}; one of {', '.join(PROVIDER_NAMES)}"
        )
    return text


def _memory_budget(text: str) -> int:
    if not text.isdigit() or not MIN_MEMORY_CHARS <= int(text) <= MAX_MEMORY_CHARS:
        raise argparse.ArgumentTypeError(
            f"a number of characters from {MIN_MEMORY_CHARS} to {MAX_MEMORY_CHARS}"
        )
    return int(text)


def _port(text: str) -> int:
    value = _positive(text)
    if value > MAX_PORT:
        raise argparse.ArgumentTypeError(f"{value} is not a port (1 to {MAX_PORT})")
    return value


def _name(what: str, limit: int) -> Callable[[str], str]:
    """An argparse type for an id: 1 to `limit` characters, not only spaces."""

    def checked(text: str) -> str:
        if not text.strip() or len(text) > limit:
            raise argparse.ArgumentTypeError(f"{what} has 1 to {limit} characters")
        return text

    return checked


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must not be negative")
    return value


MAX_PORT = 65535
MAX_RUN_ID_CHARS = 200
_RUN_ID = _name("a run id", MAX_RUN_ID_CHARS)
_WAIT_ID = _name("a wait id", MAX_NAME_CHARS)
_SESSION = _name("a session id", MAX_RUN_ID_CHARS)


def build_parser() -> argparse.ArgumentParser:
    # Typed as the base class: the command groups' modules take argparse's own subparsers, and
    # the subparsers are HarnessParsers anyway (argparse makes them of the parent's class).
    parser: argparse.ArgumentParser = HarnessParser(
        prog="harness", description="Turn a goal into a verified answer, durably, on Temporal."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    scenarios = ", ".join(scenario_names())

    run = handled(
        commands.add_parser("run", help="start a run for a goal and wait for its report"),
        "starter.cli.commands:run",
    )
    run.add_argument("goal", help='what to achieve, e.g. "Compare Paris, Tokyo and New York"')
    run.add_argument("--scenario", default="cities", help=f"tool pack ({scenarios})")
    run.add_argument("--id", dest="run_id", type=_RUN_ID, help="run id (default: a new run-… id)")
    run.add_argument("--plan", help="a plan JSON file to run instead of asking the planner")
    run.add_argument(
        "--session",
        type=_SESSION,
        help="session id: the run's planner sees this session's episodes first",
    )
    run.add_argument(
        "--no-memory", action="store_true", help="neither read memory nor leave an episode"
    )
    run.add_argument(
        "--memory-budget",
        type=_memory_budget,
        metavar="CHARS",
        help=f"the most characters of memory the planner is given (default {DEFAULT_BUDGET_CHARS})",
    )
    run.add_argument(
        "--provider",
        metavar="NAME",
        type=_provider,
        help="LLM provider for this run: scripted, anthropic or openai "
        "(default: the worker's HARNESS_LLM_PROVIDER)",
    )
    for role, does in (
        ("planner", "plans"),
        ("worker", "writes inside tools"),
        ("judge", "judges"),
    ):
        run.add_argument(
            f"--{role}-model",
            metavar="MODEL",
            help=f"the model that {does} in this run (default: the worker's HARNESS_"
            f"{role.upper()}_MODEL); checked against what the provider serves",
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
    run.add_argument(
        "--max-nodes",
        type=_positive,
        default=DEFAULT_MAX_NODES,
        help=f"the most nodes a plan may have (default {DEFAULT_MAX_NODES})",
    )
    run.add_argument("--max-replans", type=_non_negative, default=DEFAULT_MAX_REPLANS)
    run.add_argument(
        "--no-ask", action="store_true", help="fail instead of asking when the goal lacks facts"
    )
    run.add_argument("--no-wait", action="store_true", help="print the run id and return")
    run.add_argument("--json", action="store_true", help="print the RunResult as JSON")
    run.add_argument(
        "--quiet", action="store_true", help="no progress lines: only the waits and the report"
    )
    run.add_argument("--task", metavar="TASK", help="the task the run works on (see harness task)")
    run.add_argument(
        "--scope",
        type=scope_name,
        help="the task's scope (default: default); without --task, the scope whose contract "
        "holds the run",
    )
    run.add_argument(
        "--actor-keys",
        metavar="FILE",
        help="signed actors: JSON of actor -> Ed25519 public key; approvals, reconciles, "
        "async results and answers must then be signed (default: $HARNESS_ACTOR_KEYS)",
    )

    status = handled(
        commands.add_parser("status", help="a run's phase and node statuses"),
        "starter.cli.commands:status",
    )
    status.add_argument("run_id", type=_RUN_ID)
    status.add_argument("--json", action="store_true")

    trace = handled(
        commands.add_parser("trace", help="a run's trace, rebuilt from its workflow history"),
        "starter.cli.commands:trace",
    )
    trace.add_argument("run_id", type=_RUN_ID)
    trace_format = trace.add_mutually_exclusive_group()
    trace_format.add_argument("--json", action="store_true", help="one JSON array")
    trace_format.add_argument("--jsonl", action="store_true", help="one JSON object per line")

    waits = handled(
        commands.add_parser("waits", help="pending waits of a run, or of every run"),
        "starter.cli.commands:waits",
    )
    waits.add_argument("run_id", nargs="?", type=_RUN_ID)
    waits.add_argument("--json", action="store_true")

    approve = handled(
        commands.add_parser("approve", help="approve (or --reject) an APPROVAL wait"),
        "starter.cli.commands:deliver",
    )
    approve.add_argument("run_id", type=_RUN_ID)
    approve.add_argument("wait_id", type=_WAIT_ID)
    approve.add_argument("--actor", required=True, help="human:NAME or system:NAME")
    approve.add_argument("--reject", action="store_true")
    approve.add_argument("--comment")
    approve.add_argument(
        "--key", metavar="FILE", help="sign as the actor with this private key file"
    )

    answer = handled(
        commands.add_parser("answer", help="answer a USER_INPUT wait"),
        "starter.cli.commands:deliver",
    )
    answer.add_argument("run_id", type=_RUN_ID)
    answer.add_argument("wait_id", type=_WAIT_ID)
    answer.add_argument("text")
    answer.add_argument("--actor", default="human:user")
    answer.add_argument(
        "--key", metavar="FILE", help="sign as the actor with this private key file"
    )

    deliver = handled(
        commands.add_parser("deliver", help="deliver an async result, event or reconcile"),
        "starter.cli.commands:deliver",
    )
    deliver.add_argument("run_id", type=_RUN_ID)
    target = deliver.add_mutually_exclusive_group(required=True)
    target.add_argument("wait_id", nargs="?", type=_WAIT_ID)
    target.add_argument("--operation", help="the operation id instead of a wait id")
    target.add_argument("--event", help="the event name instead of a wait id")
    deliver.add_argument("--data", required=True, help="JSON, or @FILE holding JSON")
    deliver.add_argument("--actor", default="system:cli")
    deliver.add_argument(
        "--key", metavar="FILE", help="sign as the actor with this private key file"
    )

    cancel = handled(
        commands.add_parser("cancel", help="cancel a run; finished results are kept"),
        "starter.cli.commands:cancel",
    )
    cancel.add_argument("run_id", type=_RUN_ID)
    cancel.add_argument("--reason", default="cancelled from the CLI")
    cancel.add_argument("--actor", default="human:cli")

    report = handled(
        commands.add_parser("report", help="charts and an HTML page for a run"),
        "starter.cli.commands:report",
    )
    report.add_argument("run_id", type=_RUN_ID)
    report.add_argument("--out", type=Path, required=True, help="output folder")

    validate = handled(
        commands.add_parser("validate", help="check a plan file offline"),
        "starter.cli.commands:validate",
    )
    validate.add_argument("plan_file")
    validate.add_argument("--scenario", required=True, help=f"tool pack ({scenarios})")
    validate.add_argument("--json", action="store_true")

    tools = handled(
        commands.add_parser("tools", help="a scenario's tool catalog"), "starter.cli.commands:tools"
    )
    tools.add_argument(
        "--scenario", default=None, help=f"tool pack ({scenarios}; cities unless --mcp is given)"
    )
    tools.add_argument(
        "--mcp",
        action="append",
        metavar="SERVER",
        help="an MCP server's tools as the planner will see them: a name from "
        "HARNESS_MCP_CONFIG, or [NAME=]URL (streamable HTTP) or [NAME=]'COMMAND ARGS' (stdio); "
        "repeatable",
    )
    tools.add_argument("--json", action="store_true")

    server = handled(
        commands.add_parser("server", help="run the embedded Temporal dev server"),
        "starter.cli.commands:server",
    )
    server.add_argument("--port", type=_port, default=7233)
    server.add_argument(
        "--ui-port", type=_port, default=None, help="the Web UI's port (default: --port + 1000)"
    )
    server.add_argument(
        "--db",
        type=Path,
        help="SQLite file for persistence (default: temporal.db in the state directory)",
    )

    codec = handled(
        commands.add_parser(
            "codec-server", help="decode compressed payloads for the Temporal UI and CLI"
        ),
        "starter.cli.commands:codec_server",
    )
    codec.add_argument("--port", type=_port, default=8888)
    codec.add_argument(
        "--ui-origin", default="http://localhost:8233", help="the UI's address, for CORS"
    )
    evaluate = handled(
        commands.add_parser(
            "eval", help="run eval cases as real runs and report pass rates, cost and latency"
        ),
        "starter.cli.eval_actions:eval_suite",
    )
    evaluate.add_argument(
        "targets",
        nargs="*",
        metavar="CASE_FILE|SCENARIO",
        help="case files, or scenarios whose own cases to run (default: every scenario's)",
    )
    evaluate.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only cases named so (scenario/id, shell patterns: 'cities/*budget*')",
    )
    evaluate.add_argument("--repeat", type=_positive, default=1, help="runs of each case (k)")
    evaluate.add_argument(
        "--concurrency", type=_positive, default=DEFAULT_EVAL_CONCURRENCY, help="cases at once"
    )
    evaluate.add_argument(
        "--provider", metavar="NAME", type=_provider, help="every case's LLM provider"
    )
    evaluate.add_argument(
        "--case-timeout",
        type=_positive_float,
        default=DEFAULT_CASE_TIMEOUT_SECONDS,
        metavar="S",
        help="cancel a case's run still going after S seconds (the case fails)",
    )
    evaluate.add_argument("--baseline", metavar="FILE", help="fail on a case that passed there")
    evaluate.add_argument("--save-baseline", metavar="FILE", help="write this eval's baseline")
    evaluate.add_argument(
        "--out",
        metavar="DIR",
        help="where report.json and report.html go (default: evals/EVAL_ID in the state directory)",
    )
    evaluate.add_argument("--id", dest="eval_id", type=_RUN_ID, help="the eval's workflow id")
    evaluate.add_argument(
        "--resume", metavar="ID", type=_RUN_ID, help="follow a suite already started to its end"
    )
    evaluate.add_argument(
        "--no-start",
        action="store_true",
        help="do not start a local dev server, payment service or worker that is missing",
    )
    evaluate.add_argument("--quiet", action="store_true", help="no line per case as it finishes")

    add_task_commands(commands)
    add_rules_commands(commands)
    add_memory_commands(commands)
    add_connection_flags(parser, top=True)
    for name, command in commands.choices.items():
        if name not in OFFLINE_COMMANDS:
            each_command(command, lambda leaf: add_connection_flags(leaf, top=False))
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_command_line(build_parser(), argv)
    try:
        from starter.cli.commands import dispatch

        code = dispatch(args)
    except CliError as error:
        print(f"harness: {error.message}", file=sys.stderr)
        code = error.exit_code
    except KeyboardInterrupt:
        what = "the eval (`harness eval --resume ID`)" if args.command == "eval" else "the run"
        print(f"harness: interrupted; {what} goes on in Temporal", file=sys.stderr)
        code = 130
    except BrokenPipeError:  # the reader stopped reading (`| head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    exit_now(code)


if __name__ == "__main__":
    main()
