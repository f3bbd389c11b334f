"""What `harness new pack NAME` writes installs as a wheel (not editable) and passes its own tests
as written: its tools called through durable_harness.testing's `call_tool`, and its plan run end to
end through `run_plan` on a dev server of its own. The install goes to a directory of the test's,
never into the environment; the written source of the package is removed before its tests run, so
they can only pass through the installed copy, whose pack the harness finds by its entry point."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from starter.cli.app import build_parser
from starter.cli.cli_handlers import dispatch

ROOT = Path(__file__).parent.parent.parent


@pytest.mark.timeout(900)  # a wheel build and a pytest session with a dev server, under load
def test_a_new_pack_installs_and_passes_its_own_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert dispatch(build_parser().parse_args(["new", "pack", "demo"])) == 0
    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, "./demo"],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr
    shutil.rmtree(tmp_path / "demo" / "demo")

    tested = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path / "demo",
        env={**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}"},
        capture_output=True,
        text=True,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "3 passed" in tested.stdout
