"""The arguments of `harness server|codec-server`: the embedded Temporal dev server and the
codec server the Temporal UI decodes payloads with (starter.cli.commands does the work)."""

from __future__ import annotations

import argparse
from pathlib import Path

from infra.settings import Settings
from starter.cli.arg_types import port
from starter.cli.cli_handlers import handled

DEFAULT_CODEC_PORT = 8888
"""starter.servers.codec_server.DEFAULT_PORT, said here so the parser imports no protobuf."""

# Each handler imports its work when the command runs: the dev server's binary and client.


def server(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands

    return commands.server(args, settings)


def codec_server(args: argparse.Namespace, settings: Settings) -> int:
    from starter.cli import commands

    return commands.codec_server(args, settings)


def add_server_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dev = handled(
        commands.add_parser("server", help="run the embedded Temporal dev server"), server
    )
    dev.add_argument("--port", type=port, default=7233)
    dev.add_argument(
        "--ui-port", type=port, default=None, help="the Web UI's port (default: --port + 1000)"
    )
    dev.add_argument(
        "--codec-port",
        type=port,
        default=DEFAULT_CODEC_PORT,
        help="the port of the codec server the UI decodes payloads with, started beside it",
    )
    dev.add_argument(
        "--db",
        type=Path,
        help="SQLite file for persistence (default: temporal.db in the state directory)",
    )

    codec = handled(
        commands.add_parser(
            "codec-server", help="decode compressed payloads for the Temporal UI and CLI"
        ),
        codec_server,
    )
    codec.add_argument("--port", type=port, default=DEFAULT_CODEC_PORT)
    codec.add_argument(
        "--ui-origin",
        action="append",
        help="the UI's address, for CORS (repeatable; default: http://localhost:8233 and "
        "http://127.0.0.1:8233)",
    )
