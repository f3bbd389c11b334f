"""Each `harness` command is declared once, with the function that carries it out:
`handled(parser, handler)` puts the handler on the parsed arguments and `dispatch` runs it. A
handler takes the parsed arguments and the settings and returns the exit code; an async one is
run to its end.

The command groups' modules (`*_cli`) name their handlers directly; each handler imports its
work when it runs, so `harness --help` loads no Temporal client, chart library or memory store
(tests/test_import_weight.py)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from durable_harness._client.cli_connection import connection_environment
from infra.settings import Settings, SettingsError
from starter.errors import CliError

Handler = Callable[[argparse.Namespace, Settings], int | Coroutine[Any, Any, int]]


def handled(parser: argparse.ArgumentParser, handler: Handler) -> argparse.ArgumentParser:
    """`parser`, whose commands (it and the ones under it) `handler` carries out."""
    parser.set_defaults(handler=handler)
    return parser


def dispatch(args: argparse.Namespace) -> int:
    """Run the handler the command was declared with, with the settings of the environment and
    the connection flags."""
    try:
        settings = Settings.from_env(connection_environment(args))
    except SettingsError as error:
        raise CliError(str(error)) from error
    handler: Handler = args.handler
    code = handler(args, settings)
    return code if isinstance(code, int) else asyncio.run(code)
