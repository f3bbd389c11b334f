"""The arguments of `harness scenarios|worker`: the packs this environment loads, and a worker
that serves them (the very function `python -m worker` runs: same settings, same exit codes).
Packs are loaded only when one of these commands runs, never to build the parser."""

from __future__ import annotations

import argparse

from durable_harness._client.cli_connection import connection_environment
from infra.settings import Settings
from starter.cli.cli_handlers import handled


def scenarios(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli.pack_listing import list_packs  # loads every pack

    return list_packs(as_json=args.json)


def worker(args: argparse.Namespace, settings: Settings) -> int:
    from scenarios.registry import registry

    # The packs first (the worker loads the same ones, from this process's registry): one that
    # cannot load is the CLI's one line and exit 2 in a second, before the worker's SDKs load.
    registry()
    from worker.__main__ import main

    main(connection_environment(args))  # exits the process with the worker's own code


def add_pack_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listed = handled(
        commands.add_parser(
            "scenarios",
            help="the packs (scenarios) of this environment: origin, tool count, description",
        ),
        scenarios,
    )
    listed.add_argument(
        "--json",
        action="store_true",
        help="a list of objects with name, description, origin and tools (the count)",
    )
    handled(
        commands.add_parser(
            "worker",
            help="run a worker with this environment's packs (as `python -m worker`); "
            "a pack that cannot load stops it with exit 2",
        ),
        worker,
    )
