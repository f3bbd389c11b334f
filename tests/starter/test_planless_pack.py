"""A pack without an offline planner, started with the offline provider and no plan: the CLI
stops before anything starts, with one line that says what to pass instead (issue 35, item 7)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

from tests.durable_harness.weather import WEATHER
from tests.starter.test_cli import HARNESS

ROOT = Path(__file__).parent.parent.parent

PLANLESS = dataclasses.replace(WEATHER, name="planless", offline_plan=None)
"""The weather pack's tools, with no offline planner."""

UNREACHABLE = "127.0.0.1:9"
"""No server: a command that got as far as connecting would exit 3, not 2."""


def harness(*args: str, **environment: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [HARNESS, *args],
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "HARNESS_PACKS": "tests.starter.test_planless_pack:PLANLESS",
            "TEMPORAL_ADDRESS": UNREACHABLE,
            **environment,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def test_a_pack_without_an_offline_planner_is_refused_offline_before_anything_starts() -> None:
    code, stdout, stderr = harness("run", "Wind at the coast", "--scenario", "planless")

    assert code == 2
    assert stdout == ""
    assert stderr.strip().splitlines() == [
        "harness: the pack planless has no offline planner, so pass --plan or choose an LLM "
        "provider (--provider or HARNESS_LLM_PROVIDER)"
    ]


def test_with_an_llm_provider_the_same_pack_goes_on_to_start_its_run() -> None:
    code, _, stderr = harness(
        "run", "Wind at the coast", "--scenario", "planless", "--provider", "openai"
    )

    assert "no offline planner" not in stderr
    assert code == 3, stderr  # it went on to reach for the (absent) server
