"""The public package is light to import: a module of tools loads the domain, not the built-in
scenarios, the activities, the workflows or an SDK (so a scenario that uses `@tool` cannot
close an import loop through it either)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent.parent


def test_importing_the_public_package_loads_no_scenario_activity_workflow_or_sdk() -> None:
    script = "import durable_harness, json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = {name.split(".")[0] for name in json.loads(out.stdout.splitlines()[-1])}
    internal = {"scenarios", "activities", "workflows", "worker", "starter", "tool_servers"}
    sdks = {"temporalio", "anthropic", "openai", "mcp", "structlog"}
    assert loaded & (internal | sdks) == set()


def test_the_package_is_marked_typed() -> None:
    assert (ROOT / "durable_harness" / "py.typed").exists()
