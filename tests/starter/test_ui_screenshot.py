"""The UI screenshot script, run for real where Debian's Chromium and Playwright are installed:
the Temporal UI shows a refund's approval deadline by name and, in the current details, the
wait and the commands that answer it (the script checks the page before it saves it)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib.image import imread

from starter.servers.ui_screenshot import CHROMIUM

HAS_BROWSER = CHROMIUM.exists() and importlib.util.find_spec("playwright") is not None


@pytest.mark.skipif(
    not HAS_BROWSER,
    reason="needs Debian's chromium (apt-get install chromium) and the ui extra "
    "(pip install -e '.[ui]')",
)
def test_the_ui_shows_a_pending_refund_approval_by_name_with_the_commands_that_answer_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "ui.png"
    done = subprocess.run(
        [sys.executable, "-m", "starter.servers.ui_screenshot", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    height, width, _ = imread(str(out)).shape
    assert (width, height) == (1440, 2000)  # the timeline above the current details
    height, width, _ = imread(str(tmp_path / "ui-wide-result.png")).shape  # its result decoded
    assert (width, height) == (1440, 1000)


def test_a_missing_browser_is_one_line_and_exit_2_before_anything_starts(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "starter.servers.ui_screenshot",
            "--out",
            str(tmp_path / "ui.png"),
            "--chromium",
            str(tmp_path / "no-chromium"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert (
        done.stderr.splitlines()
        == [f"ui_screenshot: no Chromium at {tmp_path}/no-chromium: apt-get install chromium"]
        or "Playwright is not installed" in done.stderr
    )
    assert not (tmp_path / "ui.png").exists()
