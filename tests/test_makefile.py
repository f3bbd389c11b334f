"""The Makefile's check targets run the checks: an empty recipe would make them pass silently."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def recipe(target: str, *variables: str) -> list[list[str]]:
    """The commands `make TARGET` would run (a dry run), without the venv's install steps."""
    finished = subprocess.run(
        ["make", "--no-print-directory", "-n", target, *variables],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    commands = [shlex.split(line) for line in finished.stdout.splitlines() if line.strip()]
    return [
        c
        for c in commands
        if c and c[0].startswith(".venv/bin/") and "pip" not in c and Path(c[0]).name != "uv"
    ]


def tools(target: str) -> list[str]:
    return [" ".join([Path(c[0]).name, *c[1:]]) for c in recipe(target)]


def test_demo_runs_the_scenario_and_goal_given_else_cities_and_its_example_goal() -> None:
    demo = [".venv/bin/python", "-m", "starter.cli.demo", "--scenario"]
    assert recipe("demo") == [[*demo, "cities", ""]]
    assert recipe("demo", "SCENARIO=incidents", "GOAL=checkout is slow") == [
        [*demo, "incidents", "checkout is slow"]
    ]


def test_lint_runs_ruff_check_and_the_format_check() -> None:
    assert tools("lint") == ["ruff check .", "ruff format --check ."]


def test_typecheck_runs_mypy_configured_in_pyproject() -> None:
    assert tools("typecheck") == ["mypy"]


def test_format_fixes_and_formats() -> None:
    assert tools("format") == ["ruff check --fix --exit-zero .", "ruff format ."]


def test_test_runs_lint_typecheck_then_every_test_the_domain_s_under_coverage() -> None:
    assert tools("test") == [
        "python -m tests.package_check",
        "ruff check .",
        "ruff format --check .",
        "mypy",
        "pytest -q tests/harness --cov=harness --cov-fail-under=95",
        "pytest -q --ignore=tests/harness -m not waits_out_timeouts --durations=25",
        "pytest -q --ignore=tests/harness -m waits_out_timeouts --durations=10",
    ]


def test_the_checks_and_the_domain_s_tests_run_at_once_before_the_other_tests() -> None:
    """They need no server: run side by side (-j) they cost CI the slowest of them, not the sum.
    The other tests come after them (their real-time waits suffer on a loaded machine), beside
    only the few that sit idle waiting out timeouts, each part in a pytest of its own."""
    commands = _dry_run("test")
    checks, tests = [c for c in commands if Path(c[0]).name == "make"]
    assert "-j4" in checks and "--output-sync=target" in checks
    assert checks[-6:] == ["package", "lint", "typecheck", "docs", "test-domain", "example"]
    assert "-j2" in tests and tests[-2:] == ["test-integration", "test-timeouts"]
    assert commands.index(checks) < commands.index(tests)


def test_the_two_parts_of_the_other_tests_hold_each_test_once() -> None:
    """One part deselects what the other selects: no test runs twice, none is left out."""
    parts = [c for c in _dry_run("test") if c[0] == ".venv/bin/pytest" and "-m" in c]
    assert sorted(c[c.index("-m") + 1] for c in parts) == [
        "not waits_out_timeouts",
        "waits_out_timeouts",
    ]
    assert all("--ignore=tests/harness" in c for c in parts)


def test_example_installs_the_pack_not_editable_beside_the_venv_and_runs_its_tests() -> None:
    """Not -e and not into .venv: its entry point would load in every test process there."""
    commands = _dry_run("example")
    [install] = [c for c in commands if c[1:3] == ["pip", "install"]]
    assert "-e" not in install and "--editable" not in install
    site = install[install.index("--target") + 1]
    assert install[-1] == "./examples/library_loans"
    assert [f"PYTHONPATH={site}", ".venv/bin/pytest"] == commands[-1][:2]
    assert commands[-1][-1] == "examples/library_loans/tests"


def test_package_checks_the_wheel_in_a_fresh_venv() -> None:
    assert tools("package") == ["python -m tests.package_check"]


def test_test_unit_deselects_the_tests_that_need_a_temporal_server() -> None:
    assert tools("test-unit") == ["pytest -q -m not temporal"]


def _lint(directory: Path) -> list[int]:
    """Exit codes of the lint recipe's commands, run in `directory` with the project's config."""
    shutil.copy(ROOT / "pyproject.toml", directory / "pyproject.toml")
    codes = []
    for command in recipe("lint"):
        finished = subprocess.run(
            [str(BIN / Path(command[0]).name), *command[1:]],
            cwd=directory,
            capture_output=True,
            timeout=60,
            check=False,
        )
        codes.append(finished.returncode)
    return codes


def test_the_lint_recipe_passes_clean_code_and_fails_each_kind_of_error(tmp_path: Path) -> None:
    clean, unused_import, unformatted = (tmp_path / name for name in ("clean", "unused", "fmt"))
    for folder, text in (
        (clean, "import os\n\nprint(os.sep)\n"),
        (unused_import, "import os\n"),
        (unformatted, "x  =  1\n"),
    ):
        folder.mkdir()
        (folder / "module.py").write_text(text)
    assert _lint(clean) == [0, 0]
    assert _lint(unused_import)[0] != 0  # ruff check: F401
    assert _lint(unformatted)[1] != 0  # ruff format --check


def test_the_unit_selection_holds_no_test_that_starts_a_server() -> None:
    server_tests = [
        "tests/workflows/test_agent_run.py",  # the session's dev server (`client`)
        "tests/workflows/test_deadlines.py",  # its own time-skipping server
        "tests/starter/test_server_command.py",  # `harness server`
    ]
    finished = subprocess.run(
        [str(BIN / "pytest"), "--collect-only", "-q", "-m", "not temporal", *server_tests],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, finished.stdout
    assert "deselected" in finished.stdout


def _dry_run(target: str) -> list[list[str]]:
    finished = subprocess.run(
        ["make", "--no-print-directory", "-n", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [shlex.split(line) for line in finished.stdout.splitlines() if line.strip()]


def test_clean_removes_the_venv_and_keeps_the_state_directory_saying_where_it_is() -> None:
    state = os.environ["HARNESS_STATE_DIR"]  # the conftest's, for this test
    commands = _dry_run("clean")
    assert ["rm", "-rf", ".venv"] in commands
    assert not any(c[0] == "rm" and state in c for c in commands)
    assert any(c[0] == "echo" and f"kept the state directory {state}" in c[1] for c in commands)


def test_clean_state_deletes_the_state_directory_by_name() -> None:
    assert ["rm", "-rf", os.environ["HARNESS_STATE_DIR"]] in _dry_run("clean-state")


def test_the_environment_is_installed_from_the_lock_file_by_a_pinned_uv() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "$(STAMP): pyproject.toml uv.lock" in makefile
    assert '$(BIN)/python -m pip install --quiet "uv==$(UV_VERSION)"' in makefile
    assert "$(UV) sync --locked --extra dev" in makefile
    assert (ROOT / "uv.lock").is_file()


def test_pre_commit_runs_the_checks_make_test_runs() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    entries = [hook["entry"].removesuffix(" --force-exclude") for hook in hooks]
    made = [tool.removesuffix(" .") for tool in tools("lint") + tools("typecheck")]
    assert entries == [f".venv/bin/{tool}" for tool in made]  # on the files of the commit
    assert next(h for h in hooks if h["id"] == "mypy")["pass_filenames"] is False


def test_smoke_local_model_looks_for_the_model_before_it_installs_llama_cpp_then_runs() -> None:
    """Not in CI (llama-cpp-python builds): a machine without the GGUF file is told what to
    install before anything is built."""
    find, install, smoke = _dry_run("smoke-local-model")[-3:]
    assert find == [".venv/bin/python", "-m", "scripts.smoke_local_model", "--find"]
    assert install[install.index("||") + 1 :][1:3] == ["pip", "install"]
    assert install[-1] == "llama-cpp-python[server]"
    assert smoke == [".venv/bin/python", "-m", "scripts.smoke_local_model"]
