"""The snippets of docs/changing-workflow-code.md are the code's: its Python block is an excerpt
of the source file it names, and its commands run."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent.parent
PAGE = CHECKOUT / "docs" / "changing-workflow-code.md"
BLOCK = re.compile(r"```(?P<lang>\w+)\n(?P<body>.*?)```", re.DOTALL)


def _blocks(lang: str) -> list[str]:
    return [found["body"] for found in BLOCK.finditer(PAGE.read_text()) if found["lang"] == lang]


def test_the_pages_python_excerpts_are_in_the_files_they_name() -> None:
    excerpts = _blocks("python")
    assert excerpts
    for excerpt in excerpts:
        first, _, body = excerpt.partition("\n")
        source = (CHECKOUT / first.removeprefix("# ").strip()).read_text()
        lines = [line.strip() for line in body.splitlines()]
        code = [line.strip() for line in source.splitlines()]
        starts = [i for i, line in enumerate(code) if line == lines[0]]
        assert any(code[i : i + len(lines)] == lines for i in starts), textwrap.shorten(body, 80)


def test_the_manifest_check_the_page_gives_runs_and_passes() -> None:
    commands = [
        line.split("#")[0].split()
        for block in _blocks("bash")
        for line in block.splitlines()
        if "--check" in line
    ]
    assert commands == [["python", "-m", "tests.history_manifests", "--check"]]
    done = subprocess.run(
        [sys.executable, *commands[0][1:]], cwd=CHECKOUT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_recording_command_the_page_gives_names_a_known_option() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.record_histories", "--help"],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "--only" in done.stdout
    assert any("--only CASE" in block for block in _blocks("bash"))
