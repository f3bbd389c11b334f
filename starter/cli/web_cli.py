"""The arguments of `harness web`: the event stream, the pages and the run report, served over
HTTP (starter.web.serve does the work)."""

from __future__ import annotations

import argparse

from infra.settings import Settings
from starter.cli.arg_types import port
from starter.cli.cli_handlers import handled


def web(args: argparse.Namespace, settings: Settings) -> int:
    from starter.web.serve import serve_until_stopped  # uvicorn and the client: only for this

    return serve_until_stopped(args, settings)


def add_web_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    served = handled(
        commands.add_parser(
            "web", help="serve runs' events as Server-Sent Events, a live page and reports"
        ),
        web,
    )
    served.add_argument("--host", default="127.0.0.1", help="anything but loopback needs --token")
    served.add_argument("--port", type=port, default=8765)
    served.add_argument(
        "--token", help="required on every request (default: $HARNESS_WEB_TOKEN; none: no check)"
    )
    served.add_argument(
        "--actor", default="human:web", help="who approves and answers when a request names no one"
    )
    served.add_argument(
        "--key", metavar="FILE", help="sign approvals and answers with this private key file"
    )
