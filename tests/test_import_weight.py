"""Loading the workflows or the CLI's parser pulls in no SDK it does not need."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
HEAVY = ("anthropic", "openai", "opentelemetry", "matplotlib", "structlog", "mcp", "mcp_types")


def _modules_after(code: str) -> set[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return {name.split(".")[0] for name in json.loads(out.stdout.splitlines()[-1])}


def test_importing_the_workflows_loads_no_llm_sdk_activity_or_scenario() -> None:
    loaded = _modules_after("import workflows")
    assert loaded.isdisjoint(
        {*HEAVY, "activities", "scenarios", "worker", "starter", "tool_servers"}
    )


def test_the_cli_help_loads_no_temporal_client_chart_library_llm_sdk_or_pack() -> None:
    loaded = _modules_after(
        "from starter.cli.app import build_parser\nbuild_parser().format_help()"
    )
    # no pack either: the packs load in the commands that use them (and one that cannot
    # load must not break every command's parser)
    assert loaded.isdisjoint(
        {*HEAVY, "temporalio", "activities", "workflows", "scenarios", "worker"}
    )
