"""The arguments of `harness validate|tools`: a plan checked against a scenario's tool catalog,
and the catalog itself, as the planner sees it; no Temporal server needed (starter.cli.commands
does the work)."""

from __future__ import annotations

import argparse

from infra.settings import Settings
from starter.cli.arg_types import PACK_HELP
from starter.cli.cli_handlers import handled

# Each handler imports its work when the command runs (scenario data, MCP clients).


async def validate(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands

    return await commands.validate(args, settings)


async def tools(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands

    return await commands.tools(args, settings)


def add_catalog_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    checked = handled(commands.add_parser("validate", help="check a plan file offline"), validate)
    checked.add_argument("plan_file")
    checked.add_argument("--scenario", required=True, metavar="NAME", help=PACK_HELP)
    checked.add_argument("--json", action="store_true")

    listed = handled(commands.add_parser("tools", help="a scenario's tool catalog"), tools)
    listed.add_argument(
        "--scenario",
        default=None,
        metavar="NAME",
        help=f"{PACK_HELP} (cities unless --mcp is given)",
    )
    listed.add_argument(
        "--mcp",
        action="append",
        metavar="SERVER",
        help="an MCP server's tools as the planner will see them: a name from "
        "HARNESS_MCP_CONFIG, or [NAME=]URL (streamable HTTP) or [NAME=]'COMMAND ARGS' (stdio); "
        "repeatable",
    )
    listed.add_argument("--json", action="store_true")
