"""The arguments of `harness new pack NAME`: a new pack's package, written in the current
directory (starter.cli.pack_template writes it); no Temporal server needed."""

from __future__ import annotations

import argparse
from pathlib import Path

from infra.settings import Settings
from starter.cli.cli_handlers import handled


def new_pack(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli.pack_template import write_pack

    root = write_pack(args.name, Path.cwd())
    print(
        f"wrote the pack {args.name} in {root}; `pip install ./{args.name}` and "
        f"`pytest {args.name}` next"
    )
    return 0


def add_new_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    new = commands.add_parser("new", help="start something of your own from a template")
    kinds = new.add_subparsers(dest="kind", required=True, metavar="KIND")
    pack = handled(
        kinds.add_parser("pack", help="a pack's package: tools, entry point, tests, eval cases"),
        new_pack,
    )
    pack.add_argument(
        "name", metavar="NAME", help="the directory, Python package and pack it writes"
    )
