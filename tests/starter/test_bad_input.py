"""Bad input gets one clear line, the usage exit code (2), no traceback, and nothing sent.

Every case runs the real `harness` command against an address where no server listens, so a
case that got past its checks would show up as exit 3 ("cannot reach Temporal")."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.starter.test_cli import HARNESS

NOWHERE = "127.0.0.1:1"


def _harness(*args: str, address: str = NOWHERE) -> tuple[int, str]:
    env = {**os.environ, "TEMPORAL_ADDRESS": address}
    done = subprocess.run([HARNESS, *args], env=env, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stderr


def _files(tmp: Path) -> dict[str, str]:
    not_utf8 = tmp / "latin1.json"
    not_utf8.write_bytes(b'{"nodes": [], "note": "caf\xe9"}')
    deep = tmp / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    nan = tmp / "nan.json"
    nan.write_text(
        '{"nodes": [{"id": "a", "tool": "delay", "arguments": [{"name": "ms", '
        '"kind": "LITERAL", "value": NaN}]}]}'
    )
    return {"not_utf8": str(not_utf8), "deep": str(deep), "nan": str(nan)}


CASES: list[tuple[str, tuple[str, ...], str]] = [
    ("max seconds nan", ("run", "x", "--max-seconds", "nan"), "not a finite number"),
    ("max cost nan", ("run", "x", "--max-cost", "nan"), "not a finite number"),
    ("max seconds inf", ("run", "x", "--max-seconds", "inf"), "not a finite number"),
    ("max seconds 1e300", ("run", "x", "--max-seconds", "1e300"), "max_seconds"),
    ("empty goal", ("run", ""), "goal"),
    ("blank goal", ("run", "   "), "a goal needs words"),
    ("huge goal", ("run", "9" * 50_000), "at most 10000 characters"),
    ("long run id", ("run", "x", "--id", "a" * 1107), "a run id has 1 to 200 characters"),
    ("plan not utf-8", ("run", "x", "--plan", "{not_utf8}"), "is not UTF-8 text"),
    ("plan nested deep", ("run", "x", "--plan", "{deep}"), "nests too deeply"),
    ("plan with NaN", ("run", "x", "--plan", "{nan}"), "NaN is not a JSON number"),
    ("data nested deep", ("deliver", "r", "--event", "e", "--data", "@{deep}"), "nests too deeply"),
    ("data not json", ("deliver", "r", "--event", "e", "--data", "{nope"), "not valid JSON"),
    (
        "long comment",
        ("approve", "r", "w", "--actor", "human:a", "--comment", "c" * 3000),
        "comment",
    ),
    ("bad actor", ("approve", "r", "w", "--actor", "nobody"), "human:NAME"),
    ("report to /proc", ("report", "r", "--out", "/proc/nope/x"), "cannot write to"),
    ("port too big", ("server", "--port", "70000"), "is not a port"),
    ("unknown scenario", ("tools", "--scenario", "citys"), "did you mean 'cities'?"),
]


def _resolve(arg: str, files: dict[str, str]) -> str:
    """`{deep}` and `@{deep}` name a file made for the case; any other argument is literal."""
    prefix = "@" if arg.startswith("@{") else ""
    name = arg.removeprefix(prefix)
    if name.startswith("{") and name.endswith("}") and name[1:-1] in files:
        return prefix + files[name[1:-1]]
    return arg


@pytest.mark.parametrize(
    ("args", "expected"), [(a, e) for _, a, e in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_gets_one_clear_line_and_the_usage_exit_code(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    files = _files(tmp_path)
    code, err = _harness(*(_resolve(arg, files) for arg in args))
    assert "Traceback" not in err
    assert code == 2, err
    assert expected in err.strip().splitlines()[-1]


def test_an_address_that_is_not_one_gets_one_line() -> None:
    code, err = _harness("status", "r", address="::::nope")
    assert (code, "Traceback" in err) == (2, False)
    assert err.strip() == (
        "harness: TEMPORAL_ADDRESS=::::nope is not an address like localhost:7233 "
        "(invalid target URL: empty host)"
    )


@pytest.mark.parametrize("buffered", [True, False])
def test_output_cut_short_by_its_reader_is_not_an_error(buffered: bool) -> None:
    """`| true` has closed the pipe before harness writes: the write (unbuffered) or the flush
    at exit (buffered) meets a broken pipe."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED" or not buffered}
    pipeline = f"{HARNESS} tools --json | true; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(
        ["bash", "-c", pipeline], env=env, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, "")
