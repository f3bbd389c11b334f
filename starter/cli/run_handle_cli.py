"""The arguments of `harness status|trace|waits|approve|answer|deliver|cancel|report`: the
commands on a run that exists, each one a call on the Python API's `Run` handle
(starter.cli.commands does the work)."""

from __future__ import annotations

import argparse
from pathlib import Path

from infra.settings import Settings
from starter.cli.arg_types import RUN_ID, WAIT_ID
from starter.cli.cli_handlers import handled

# Each handler imports its work when the command runs: the Temporal client and the API are
# more than `harness --help` should load (tests/test_import_weight.py).


async def status(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands

    return await commands.status(args, settings)


async def trace(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands

    return await commands.trace(args, settings)


async def waits(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands

    return await commands.waits(args, settings)


async def deliver(args: argparse.Namespace, settings: Settings) -> int:
    """approve, answer and deliver."""
    from starter.cli import commands

    return await commands.deliver(args, settings)


async def cancel(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands

    return await commands.cancel(args, settings)


async def report(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands

    return await commands.report(args, settings)


def add_run_handle_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    shown = handled(commands.add_parser("status", help="a run's phase and node statuses"), status)
    shown.add_argument("run_id", type=RUN_ID)
    shown.add_argument("--json", action="store_true")

    traced = handled(
        commands.add_parser("trace", help="a run's trace, rebuilt from its workflow history"),
        trace,
    )
    traced.add_argument("run_id", type=RUN_ID)
    trace_format = traced.add_mutually_exclusive_group()
    trace_format.add_argument("--json", action="store_true", help="one JSON array")
    trace_format.add_argument("--jsonl", action="store_true", help="one JSON object per line")

    pending = handled(
        commands.add_parser("waits", help="pending waits of a run, or of every run"), waits
    )
    pending.add_argument("run_id", nargs="?", type=RUN_ID)
    pending.add_argument("--json", action="store_true")

    _add_deliveries(commands)

    cancelled = handled(
        commands.add_parser("cancel", help="cancel a run; finished results are kept"), cancel
    )
    cancelled.add_argument("run_id", type=RUN_ID)
    cancelled.add_argument("--reason", default="cancelled from the CLI")
    cancelled.add_argument("--actor", default="human:cli")

    drawn = handled(commands.add_parser("report", help="charts and an HTML page for a run"), report)
    drawn.add_argument("run_id", type=RUN_ID)
    drawn.add_argument("--out", type=Path, required=True, help="output folder")


def _add_deliveries(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """approve, answer and deliver: what a run waits for, sent as an update."""
    approve = handled(
        commands.add_parser("approve", help="approve (or --reject) an APPROVAL wait"), deliver
    )
    approve.add_argument("run_id", type=RUN_ID)
    approve.add_argument("wait_id", type=WAIT_ID)
    approve.add_argument("--actor", required=True, help="human:NAME or system:NAME")
    approve.add_argument("--reject", action="store_true")
    approve.add_argument("--comment")
    _signing_key(approve)

    answer = handled(commands.add_parser("answer", help="answer a USER_INPUT wait"), deliver)
    answer.add_argument("run_id", type=RUN_ID)
    answer.add_argument("wait_id", type=WAIT_ID)
    answer.add_argument("text")
    answer.add_argument("--actor", default="human:user")
    _signing_key(answer)

    delivered = handled(
        commands.add_parser("deliver", help="deliver an async result, event or reconcile"),
        deliver,
    )
    delivered.add_argument("run_id", type=RUN_ID)
    target = delivered.add_mutually_exclusive_group(required=True)
    target.add_argument("wait_id", nargs="?", type=WAIT_ID)
    target.add_argument("--operation", help="the operation id instead of a wait id")
    target.add_argument("--event", help="the event name instead of a wait id")
    delivered.add_argument("--data", required=True, help="JSON, or @FILE holding JSON")
    delivered.add_argument("--actor", default="system:cli")
    _signing_key(delivered)


def _signing_key(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--key", metavar="FILE", help="sign as the actor with this private key file"
    )
