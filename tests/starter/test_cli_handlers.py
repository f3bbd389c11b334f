"""Each `harness` command is declared once with its handler, a function its command group's
module names (no handler is looked up by a string); the handlers import their work only when
they run; and the commands that act on a run do it through the Python API
(durable_harness.client), so a script and the CLI do each thing alike."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from starter.cli import commands
from starter.cli.app import build_parser

ROOT = Path(__file__).parent.parent.parent
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
HANDLERS_WORK = (
    "starter.cli.commands",
    "starter.cli.task_actions",
    "starter.cli.rules_actions",
    "starter.cli.memory_actions",
    "starter.cli.eval_actions",
)
"""The modules that carry the commands out, which their handlers import when they run."""


def _leaves() -> list[tuple[str, object]]:
    """Every command, with the handler it runs (its own, or the one its group declared)."""
    found: list[tuple[str, object]] = []

    def walk(parser: argparse.ArgumentParser, inherited: object) -> None:
        handler = parser.get_default("handler") or inherited
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not nested:
            found.append((parser.prog, handler))
        for action in nested:
            for child in action.choices.values():
                walk(child, handler)

    walk(build_parser(), None)
    return found


def _modules_after(code: str) -> set[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_every_command_has_a_handler_that_takes_the_arguments_and_the_settings() -> None:
    leaves = _leaves()
    assert len(leaves) > 30
    for prog, handler in leaves:
        assert callable(handler), f"{prog} has no handler it can call: {handler!r}"
        assert list(inspect.signature(handler).parameters) == ["args", "settings"], prog


@pytest.mark.parametrize("command", RUN_COMMANDS)
def test_the_commands_that_act_on_a_run_go_through_the_api(command: str) -> None:
    handler = next(handler for prog, handler in _leaves() if prog == f"harness {command}")
    assert callable(handler)
    handed_to = re.findall(r"commands\.(\w+)\(", inspect.getsource(handler))
    assert len(handed_to) == 1, f"{command}'s handler hands over to one function of commands"
    work: Callable[..., object] = getattr(commands, handed_to[0])
    source = inspect.getsource(work)
    assert "Harness.with_settings(settings)" in source
    assert "client_for" not in source and "get_workflow_handle" not in source


def test_declaring_the_commands_imports_none_of_the_work_they_do() -> None:
    loaded = _modules_after("from starter.cli.app import build_parser\nbuild_parser()")
    assert loaded.isdisjoint(HANDLERS_WORK)
    assert "memory" not in loaded and "temporalio" not in loaded


def _modules_of_command(words: list[str], state: Path) -> tuple[str, set[str]]:
    """What `harness WORDS` prints, and the modules it imports (as `python -X importtime`
    reports them: every import statement's, not `importlib.import_module`'s)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "starter.cli.app", *words],
        cwd=ROOT,
        env={**os.environ, "HARNESS_STATE_DIR": str(state), "HARNESS_MEMORY_URL": ""},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def test_a_memory_command_loads_neither_the_workflows_nor_the_run_api(tmp_path: Path) -> None:
    printed, loaded = _modules_of_command(["memory", "list", "--json"], tmp_path)
    assert json.loads(printed) == []  # the command ran, on an empty store
    assert loaded.isdisjoint(
        {"workflows", "durable_harness.client", "starter.cli.commands", "structlog"}
    )
