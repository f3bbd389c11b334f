"""The connection flags of every command that talks to Temporal: `--address`, `--namespace` and
`--profile` stand for TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TEMPORAL_PROFILE, so a profile
written by `temporal config set` works unchanged (infra.settings reads it)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

OFFLINE_COMMANDS = frozenset(
    {"validate", "tools", "scenarios", "codec-server", "server", "memory", "new"}
)
"""Commands that connect to no Temporal server (`server` starts one on its own --port)."""
CONNECTION_FLAGS = {"address": "TEMPORAL_ADDRESS", "namespace": "TEMPORAL_NAMESPACE",
                    "profile": "TEMPORAL_PROFILE"}  # fmt: skip
"""Each flag, and the variable of the Temporal CLI's and SDK's configuration it stands for."""


def add_connection_flags(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """Before or after the command (`harness --profile p run ...`, `harness run ... --profile
    p`): a flag given after the command wins."""
    default = None if top else argparse.SUPPRESS  # after the command: set only when given
    group = parser.add_argument_group("connection (read as the temporal CLI reads it)")
    for flag, metavar, said in (
        ("--address", "HOST:PORT", "the Temporal frontend"),
        ("--namespace", "NAME", "the Temporal namespace"),
        ("--profile", "NAME", "a profile of the Temporal config file"),
    ):
        group.add_argument(flag, metavar=metavar, help=said, default=default)


def each_command(
    parser: argparse.ArgumentParser, apply: Callable[[argparse.ArgumentParser], None]
) -> None:
    nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not nested:
        apply(parser)
    for action in nested:
        for child in action.choices.values():
            each_command(child, apply)


def connection_environment(args: argparse.Namespace) -> dict[str, str]:
    """The environment with the connection flags given in place of their variables."""
    return environment_with({flag: getattr(args, flag, None) for flag in CONNECTION_FLAGS})


def environment_with(given: dict[str, str | None]) -> dict[str, str]:
    """The environment with each connection setting given (by its flag's name) in place of its
    variable; one not given (None or empty) leaves the variable as it is."""
    chosen = {CONNECTION_FLAGS[flag]: value for flag, value in given.items() if value}
    return {**os.environ, **chosen}
