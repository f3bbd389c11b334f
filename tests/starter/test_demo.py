"""`make demo`'s entry point: the scenario it is given is checked before anything starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_an_unknown_demo_scenario_is_one_line_and_exit_2_before_anything_starts(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_STATE_DIR": str(state)}
    finished = subprocess.run(
        [sys.executable, "-m", "starter.cli.demo", "--scenario", "incident", "checkout is slow"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 2
    (line,) = finished.stderr.splitlines()
    assert line.startswith("demo: unknown scenario 'incident'; did you mean 'incidents'?")
    assert finished.stdout == ""
    assert not state.exists() or not any(state.iterdir())
