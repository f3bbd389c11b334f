"""The `harness` command: the top parser, the command groups in the order `harness --help`
lists them, and the dispatch. Each group's module adds its commands and names the handler of
each (starter.cli.cli_handlers)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from durable_harness._client.cli_connection import (
    OFFLINE_COMMANDS,
    add_connection_flags,
    each_command,
)
from durable_harness.exceptions import HarnessError
from infra.process import exit_now
from starter.cli.catalog_cli import add_catalog_commands
from starter.cli.chat_cli import add_chat_command
from starter.cli.cli_handlers import dispatch
from starter.cli.cli_parser import HarnessParser, package_version, parse_command_line
from starter.cli.eval_cli import add_eval_command
from starter.cli.memory_cli import add_memory_commands
from starter.cli.new_cli import add_new_commands
from starter.cli.packs_cli import add_pack_commands
from starter.cli.rules_cli import add_rules_commands
from starter.cli.run_cli import add_run_command
from starter.cli.run_handle_cli import add_run_handle_commands
from starter.cli.servers_cli import add_server_commands
from starter.cli.task_cli import add_task_commands
from starter.cli.web_cli import add_web_command
from starter.errors import exit_code_of

COMMAND_GROUPS: tuple[
    Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None], ...
] = (
    add_run_command,  # run
    add_run_handle_commands,  # status, trace, waits, approve, answer, deliver, cancel, report
    add_chat_command,  # chat
    add_catalog_commands,  # validate, tools
    add_pack_commands,  # scenarios, worker
    add_server_commands,  # server, codec-server
    add_web_command,  # web
    add_eval_command,  # eval
    add_task_commands,  # task, fact, evidence, decision, submit, review, context
    add_rules_commands,  # contract, lesson, keys
    add_memory_commands,  # memory
    add_new_commands,  # new
)
"""Every command group, in the order `harness --help` and docs/cli.md list their commands."""


def build_parser() -> argparse.ArgumentParser:
    # Typed as the base class: the command groups' modules take argparse's own subparsers, and
    # the subparsers are HarnessParsers anyway (argparse makes them of the parent's class).
    parser: argparse.ArgumentParser = HarnessParser(
        prog="harness", description="Turn a goal into a verified answer, durably, on Temporal."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_group in COMMAND_GROUPS:
        add_group(commands)
    add_connection_flags(parser, top=True)
    for name, command in commands.choices.items():
        if name not in OFFLINE_COMMANDS:
            each_command(command, lambda leaf: add_connection_flags(leaf, top=False))
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_command_line(build_parser(), argv)
    try:
        code = dispatch(args)
    except HarnessError as error:  # the client's public exceptions, and the CLI's own
        print(f"harness: {error.message}", file=sys.stderr)
        code = exit_code_of(error)
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
