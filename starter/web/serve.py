"""`harness web`: the app on uvicorn, on localhost unless a token guards it."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
from types import FrameType
from typing import NoReturn

import uvicorn

from durable_harness.client import Harness
from infra.settings import Settings
from starter import output
from starter.errors import CliError
from starter.web.app import create_app
from starter.web.context import WebConfig, WebContext
from starter.web.guards import is_local

TOKEN_VARIABLE = "HARNESS_WEB_TOKEN"
GRACEFUL_SHUTDOWN_SECONDS = 3
"""Open streams get this long to end on Ctrl-C; a browser reconnects and resumes anyway."""


def web_config(args: argparse.Namespace) -> WebConfig:
    """The app's configuration; refused in one line when it would listen beyond this machine
    without a token."""
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    if token is None and not is_local(args.host):
        raise CliError(
            f"--host {args.host} is reachable from other machines: give --token "
            f"(or ${TOKEN_VARIABLE}), or listen on 127.0.0.1"
        )
    return WebConfig(args.host, args.port, token, args.actor, args.key)


def serve_until_stopped(args: argparse.Namespace, settings: Settings) -> int:
    """Serve until Ctrl-C or SIGTERM, then exit 0: open streams end without their `end`
    message, so a browser reconnects to the next `harness web` and resumes there."""
    signal.signal(signal.SIGTERM, _interrupted)  # uvicorn raises it again once it has stopped
    try:
        return asyncio.run(serve(args, settings))
    except KeyboardInterrupt:
        return 0


def _interrupted(signum: int, frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt


async def serve(args: argparse.Namespace, settings: Settings) -> int:
    config = web_config(args)
    listening = _listen(config.host, config.port)
    harness = await Harness.with_settings(settings)
    app = create_app(WebContext(harness, config))
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
    )
    shown = f"[{config.host}]" if ":" in config.host else config.host
    output.note(f"harness web on http://{shown}:{config.port}/ (Ctrl-C stops it)")
    await server.serve(sockets=[listening])
    return 0


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host, port))
    except OSError as error:
        listening.close()
        raise CliError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    return listening
