"""Each `harness` command is declared once, with its handler: `handled(parser, "module:name")`
puts the handler's name on the parsed arguments, and `call` imports it then (so `harness
--help` loads no Temporal client, chart library or scenario data) and runs it. A handler takes
the parsed arguments and the settings and returns the exit code; an async one is run to its
end."""

from __future__ import annotations

import argparse
import asyncio
import inspect
from importlib import import_module
from typing import Any

from infra.settings import Settings


def handled(parser: argparse.ArgumentParser, handler: str) -> argparse.ArgumentParser:
    """`parser`, whose commands (it and the ones under it) `handler` carries out."""
    parser.set_defaults(handler=handler)
    return parser


def call(args: argparse.Namespace, settings: Settings) -> int:
    module, name = str(args.handler).split(":")
    handler: Any = getattr(import_module(module), name)
    if inspect.iscoroutinefunction(handler):
        code: int = asyncio.run(handler(args, settings))
        return code
    code = handler(args, settings)
    return code
