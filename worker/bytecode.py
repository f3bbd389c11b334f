"""The workflow package's bytecode, written once when the worker starts.

The workflow sandbox imports the workflow modules afresh for every run it starts (and every
run it replays into its cache), so that no run sees another's module state. Python reads them
from their cached bytecode where it can; with none (PYTHONDONTWRITEBYTECODE, or a tree never
compiled) it compiles their source each time: 55 ms of a worker's CPU per run on this project's
2-core machine, against 22 ms with the bytecode there (bench/README.md).
"""

from __future__ import annotations

import compileall
from pathlib import Path

import workflows

WORKFLOW_PACKAGE = Path(workflows.__file__).resolve().parent


def compile_workflow_package() -> bool:
    """Write what is missing or stale of the workflow package's bytecode; False when the
    package's folder cannot be written (an image built with its bytecode, say)."""
    try:
        return bool(compileall.compile_dir(WORKFLOW_PACKAGE, quiet=2))
    except OSError:
        return False
