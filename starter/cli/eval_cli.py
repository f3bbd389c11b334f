"""The arguments of `harness eval`: which cases to run as real runs, how often and how many at
once, and what to compare the report with (starter.cli.eval_actions does the work)."""

from __future__ import annotations

import argparse

from harness.evals.chaos import DEFAULT_CHAOS_SEED
from harness.evals.eval_report import DEFAULT_CASE_TIMEOUT_SECONDS, DEFAULT_EVAL_CONCURRENCY
from infra.settings import Settings
from starter.cli.arg_types import RUN_ID, non_negative, positive, positive_float, provider
from starter.cli.cli_handlers import handled


async def eval_suite(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import eval_actions  # the Temporal client: loaded when the eval starts

    return await eval_actions.eval_suite(args, settings)


def chaos_rate(text: str) -> float:
    rate = positive_float(text)
    if rate > 1:
        raise argparse.ArgumentTypeError(f"{rate:g} is not a rate (more than 0, at most 1)")
    return rate


def add_eval_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    evaluate = handled(
        commands.add_parser(
            "eval", help="run eval cases as real runs and report pass rates, cost and latency"
        ),
        eval_suite,
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
    evaluate.add_argument("--repeat", type=positive, default=1, help="runs of each case (k)")
    evaluate.add_argument(
        "--concurrency", type=positive, default=DEFAULT_EVAL_CONCURRENCY, help="cases at once"
    )
    evaluate.add_argument(
        "--provider", metavar="NAME", type=provider, help="every case's LLM provider"
    )
    evaluate.add_argument(
        "--chaos",
        type=chaos_rate,
        metavar="RATE",
        help="inject model mistakes into this share of planner calls and report recovery",
    )
    evaluate.add_argument(
        "--chaos-seed",
        type=non_negative,
        default=DEFAULT_CHAOS_SEED,
        metavar="N",
        help=f"the seed of --chaos's draws (default {DEFAULT_CHAOS_SEED}: the same every time)",
    )
    evaluate.add_argument(
        "--case-timeout",
        type=positive_float,
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
    evaluate.add_argument("--id", dest="eval_id", type=RUN_ID, help="the eval's workflow id")
    evaluate.add_argument(
        "--resume", metavar="ID", type=RUN_ID, help="follow a suite already started to its end"
    )
    evaluate.add_argument(
        "--no-start",
        action="store_true",
        help="do not start a local dev server, payment service or worker that is missing",
    )
    evaluate.add_argument("--quiet", action="store_true", help="no line per case as it finishes")
    evaluate.add_argument(
        "--json", action="store_true", help="print the report as JSON instead of tables"
    )
