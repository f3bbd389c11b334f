"""The arguments of `harness run`: a goal, the tools it may use, its budget, its memory, its
task, and how the run is followed (starter.cli.commands does the work)."""

from __future__ import annotations

import argparse

from harness.engine.bounds import AGENT_RUNTIMES
from harness.engine.faults import FaultSpec
from harness.engine.run import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_REPLANS,
    MAX_MEMORY_CHARS,
    MIN_MEMORY_CHARS,
)
from harness.engine.validation import DEFAULT_MAX_NODES
from harness.recall.memory_context import DEFAULT_BUDGET_CHARS
from infra.settings import Settings
from starter.cli.arg_types import (
    PACK_HELP,
    RUN_ID,
    SESSION,
    non_negative,
    positive,
    positive_float,
    provider,
)
from starter.cli.cli_handlers import handled
from starter.cli.task_cli import scope_name


async def run(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands  # the Temporal client: loaded when a run starts

    return await commands.run(args, settings)


def _fault(text: str) -> FaultSpec:
    try:
        return FaultSpec.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _memory_budget(text: str) -> int:
    if not text.isdigit() or not MIN_MEMORY_CHARS <= int(text) <= MAX_MEMORY_CHARS:
        raise argparse.ArgumentTypeError(
            f"a number of characters from {MIN_MEMORY_CHARS} to {MAX_MEMORY_CHARS}"
        )
    return int(text)


def add_run_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = handled(
        commands.add_parser("run", help="start a run for a goal and wait for its report"), run
    )
    parser.add_argument("goal", help='what to achieve, e.g. "Compare Paris, Tokyo and New York"')
    parser.add_argument("--scenario", default="cities", metavar="NAME", help=PACK_HELP)
    parser.add_argument("--id", dest="run_id", type=RUN_ID, help="run id (default: a new run-… id)")
    parser.add_argument("--plan", help="a plan JSON file to run instead of asking the planner")
    _memory_arguments(parser)
    _model_arguments(parser)
    _budget_arguments(parser)
    parser.add_argument(
        "--no-ask", action="store_true", help="fail instead of asking when the goal lacks facts"
    )
    parser.add_argument("--no-wait", action="store_true", help="print the run id and return")
    parser.add_argument("--json", action="store_true", help="print the RunResult as JSON")
    parser.add_argument(
        "--quiet", action="store_true", help="no progress lines: only the waits and the report"
    )
    parser.add_argument(
        "--task", metavar="TASK", help="the task the run works on (see harness task)"
    )
    parser.add_argument(
        "--scope",
        type=scope_name,
        help="the task's scope (default: default); without --task, the scope whose contract "
        "holds the run",
    )
    parser.add_argument(
        "--actor-keys",
        metavar="FILE",
        help="signed actors: JSON of actor -> Ed25519 public key; approvals, reconciles, "
        "async results and answers must then be signed (default: $HARNESS_ACTOR_KEYS)",
    )


def _memory_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--session",
        type=SESSION,
        help="session id: the run's planner sees this session's episodes first",
    )
    parser.add_argument(
        "--no-memory", action="store_true", help="neither read memory nor leave an episode"
    )
    parser.add_argument(
        "--memory-budget",
        type=_memory_budget,
        metavar="CHARS",
        help=f"the most characters of memory the planner is given (default {DEFAULT_BUDGET_CHARS})",
    )


def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--provider",
        metavar="NAME",
        type=provider,
        help="LLM provider for this run: scripted, anthropic or openai "
        "(default: the worker's HARNESS_LLM_PROVIDER)",
    )
    for role, does in (
        ("planner", "plans"),
        ("worker", "writes inside tools"),
        ("judge", "judges"),
        ("agent", "takes agent nodes' turns"),
    ):
        parser.add_argument(
            f"--{role}-model",
            metavar="MODEL",
            help=f"the model that {does} in this run (default: the worker's HARNESS_"
            f"{role.upper()}_MODEL); checked against what the provider serves",
        )
    parser.add_argument(
        "--agent-runtime",
        metavar="NAME",
        choices=AGENT_RUNTIMES,
        help=f"the runtime that runs this run's agent nodes: {', '.join(AGENT_RUNTIMES)} "
        "(default: builtin; pydantic-ai needs the worker's pydantic-ai extra)",
    )


def _budget_arguments(parser: argparse.ArgumentParser) -> None:
    """The budget, the faults a test injects, and the plan's bounds."""
    parser.add_argument("--max-tokens", type=positive, help="token budget (LLM input + output)")
    parser.add_argument(
        "--max-tool-calls", type=positive, help="tool-call budget, retries included"
    )
    parser.add_argument("--max-seconds", type=positive_float, help="wall-clock budget")
    parser.add_argument("--max-cost", type=positive_float, help="estimated cost budget, USD")
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        type=_fault,
        metavar="TOOL[:ARG]=CODE[*N]",
        help="make matching nodes fail N times with CODE (tests and demos)",
    )
    parser.add_argument("--max-concurrency", type=positive, default=DEFAULT_MAX_CONCURRENCY)
    parser.add_argument(
        "--max-nodes",
        type=positive,
        default=DEFAULT_MAX_NODES,
        help=f"the most nodes a plan may have (default {DEFAULT_MAX_NODES})",
    )
    parser.add_argument("--max-replans", type=non_negative, default=DEFAULT_MAX_REPLANS)
