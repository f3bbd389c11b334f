"""The worker writes the workflow package's bytecode when it starts, so the sandbox's per-run
import of the workflow modules reads it instead of compiling their source every time."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from worker.bytecode import WORKFLOW_PACKAGE, compile_workflow_package


def test_the_workflow_modules_bytecode_is_there_after_the_worker_compiles_it() -> None:
    assert compile_workflow_package()
    for source in WORKFLOW_PACKAGE.glob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        assert cached.is_file(), f"no bytecode for {source.name}"
        assert cached.stat().st_mtime >= source.stat().st_mtime
