"""The command line's manners: `harness --version`, and a typo answered in one line that says
what was meant and where the help is, with the usage exit code and no usage block."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from starter.cli.app import build_parser
from starter.cli.cli_parser import closest, leaf_parser
from tests.starter.test_cli import HARNESS

ROOT = Path(__file__).resolve().parents[2]


def _harness(*args: str) -> tuple[int, str, str]:
    env = {**os.environ, "TEMPORAL_ADDRESS": "127.0.0.1:1"}  # nothing listens: nothing is sent
    done = subprocess.run([HARNESS, *args], env=env, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_version_prints_the_version_pyproject_declares() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    code, out, err = _harness("--version")
    assert (code, out, err) == (0, f"harness {declared}\n", "")


TYPOS = [
    (("rnu", "x"), "harness: invalid choice: 'rnu'; did you mean 'run'? See `harness --help`."),
    (
        ("run", "x", "--max-tokns", "3"),
        "harness run: unrecognized arguments: --max-tokns 3; did you mean --max-tokens? "
        "See `harness run --help`.",
    ),
    (
        ("task", "crate", "x"),
        "harness task: invalid choice: 'crate'; did you mean 'create'? See `harness task --help`.",
    ),
    (
        ("task", "create", "x", "--actor", "human:a", "--scoep=s"),
        "harness task create: unrecognized argument: --scoep=s; did you mean --scope? "
        "See `harness task create --help`.",
    ),
    (
        ("memory", "list", "--tier", "semantc"),
        "harness memory list: invalid choice: 'semantc'; did you mean 'semantic'? "
        "See `harness memory list --help`.",
    ),
    (
        ("status", "r", "--adress", "x"),
        "harness status: unrecognized arguments: --adress x; did you mean --address? "
        "See `harness status --help`.",
    ),
]


@pytest.mark.parametrize(("args", "line"), TYPOS, ids=[" ".join(a) for a, _ in TYPOS])
def test_a_typo_gets_one_line_with_a_did_you_mean_and_the_help_to_read(
    args: tuple[str, ...], line: str
) -> None:
    assert _harness(*args) == (2, "", line + "\n")


def test_a_choice_nothing_is_near_lists_a_short_set_and_not_a_long_one() -> None:
    assert _harness("memory", "list", "--tier", "zzz")[2] == (
        "harness memory list: invalid choice: 'zzz' (one of episodic, semantic). "
        "See `harness memory list --help`.\n"
    )
    assert _harness("zzz")[2] == "harness: invalid choice: 'zzz'. See `harness --help`.\n"


def test_a_word_far_from_every_known_one_suggests_nothing() -> None:
    assert closest("--max-tokns", ["--max-tokens", "--max-nodes"]) == "--max-tokens"
    assert closest("--colour", ["--max-tokens", "--scenario"]) is None


def test_a_stray_flag_is_matched_against_the_flags_of_the_command_given() -> None:
    parser = build_parser()
    args, _ = parser.parse_known_args(["task", "create", "x", "--actor", "human:a"])
    assert leaf_parser(parser, args).prog == "harness task create"
