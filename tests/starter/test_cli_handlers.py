"""Each `harness` command is declared once with its handler, and the commands that act on a
run do it through the Python API (starter.api), so a script and the CLI do each thing alike."""

from __future__ import annotations

import argparse
import inspect
from importlib import import_module

import pytest

from starter.cli.app import build_parser

RUN_COMMANDS = (
    "run",
    "status",
    "trace",
    "waits",
    "approve",
    "answer",
    "deliver",
    "cancel",
    "report",
)


def _leaves() -> list[tuple[str, str | None]]:
    """Every command, with the handler it runs (its own, or the one its group declared)."""
    found: list[tuple[str, str | None]] = []

    def walk(parser: argparse.ArgumentParser, inherited: str | None) -> None:
        handler = parser.get_default("handler") or inherited
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not nested:
            found.append((parser.prog, handler))
        for action in nested:
            for child in action.choices.values():
                walk(child, handler)

    walk(build_parser(), None)
    return found


def _handler(target: str) -> object:
    module, name = target.split(":")
    return getattr(import_module(module), name)


def test_every_command_has_a_handler_that_exists() -> None:
    leaves = _leaves()
    assert len(leaves) > 30
    for prog, handler in leaves:
        assert handler, f"{prog} has no handler"
        assert callable(_handler(handler)), prog


@pytest.mark.parametrize("command", RUN_COMMANDS)
def test_the_commands_that_act_on_a_run_go_through_the_api(command: str) -> None:
    handler = next(handler for prog, handler in _leaves() if prog == f"harness {command}")
    assert handler is not None
    source = inspect.getsource(_handler(handler))  # type: ignore[arg-type]
    assert "Harness.with_settings(settings)" in source
    assert "client_for" not in source and "get_workflow_handle" not in source
