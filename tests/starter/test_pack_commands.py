"""The CLI and packs (issue 35, item 4): `harness scenarios` lists each pack with its origin and
tool count (a table, or JSON of a stable shape), `harness worker` is `python -m worker`, a pack
that cannot load is one line and exit 2, and `harness run --scenario` passes on a pack only the
worker may have (whose catalog activity refuses it when it has none either)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest
from temporalio.client import Client

from durable_harness._client.cli_connection import OFFLINE_COMMANDS
from durable_harness.exceptions import HarnessError, InvalidInput
from harness.engine.run import RunRequest
from infra.settings import Settings
from scenarios.registry import PACKS_VARIABLE, LoadedPack, PackLoadError, registered, registry
from starter.cli import commands, packs_cli
from starter.cli.app import build_parser
from starter.cli.pack_listing import pack_entries, pack_table
from starter.errors import EXIT_FAILED_RUN, EXIT_USAGE, exit_code_of
from starter.plan_files import pack_here
from tests.durable_harness.weather import WEATHER
from tests.starter.test_cli import HARNESS
from tests.support import running_worker

ROOT = Path(__file__).parent.parent.parent
WEATHER_VALUE = "tests.durable_harness.weather:WEATHER"
UNREACHABLE = "127.0.0.1:9"
"""No server: a command that got as far as connecting would exit 3, not 2."""


def _settings(**environment: str) -> Settings:
    return Settings.from_env({**os.environ, **environment})


def _run_args(*words: str) -> argparse.Namespace:
    return build_parser().parse_args(["run", *words])


# harness scenarios: the listing


def test_the_listing_shows_each_packs_tool_count_origin_and_description() -> None:
    loaded = [
        *registry().loaded(),
        LoadedPack(dataclasses.replace(WEATHER, offline_plan=None), "weather-pack 1.2"),
    ]

    lines = pack_table(loaded)

    assert lines[0].split() == ["pack", "tools", "offline", "plan", "origin", "description"]
    weather = next(line for line in lines if line.startswith("weather "))
    assert weather.split()[:5] == ["weather", str(len(WEATHER.tools)), "no", "weather-pack", "1.2"]
    assert weather.endswith(WEATHER.description)
    cities = next(line for line in lines if line.startswith("cities "))
    assert cities.split()[2:4] == ["yes", "built-in"]
    assert lines[-1].startswith(f"{len(loaded)} pack(s)")
    # the columns line up under their headings, whatever a pack's name or origin
    starts = {line.index(" built-in ") for line in lines[1:-1] if " built-in " in line}
    assert starts == {lines[0].index(" origin ")}


def test_the_json_listing_is_a_list_of_name_description_origin_and_tools() -> None:
    entries = pack_entries([LoadedPack(WEATHER, "HARNESS_PACKS")])

    assert [entry.model_dump(mode="json") for entry in entries] == [
        {
            "name": "weather",
            "description": WEATHER.description,
            "origin": "HARNESS_PACKS",
            "tools": len(WEATHER.tools),
        }
    ]


def test_scenarios_is_offline_and_worker_takes_the_connection_flags() -> None:
    listed = build_parser().parse_args(["scenarios", "--json"])
    assert listed.handler is packs_cli.scenarios and listed.json
    assert "scenarios" in OFFLINE_COMMANDS
    worker = build_parser().parse_args(["worker", "--address", "elsewhere:7233"])
    assert worker.handler is packs_cli.worker and worker.address == "elsewhere:7233"


# a pack that cannot load


def test_a_pack_that_cannot_load_is_bad_input_with_the_usage_exit_code() -> None:
    error = PackLoadError("pack x (HARNESS_PACKS): cannot load x:Y: ModuleNotFoundError: x")

    assert isinstance(error, HarnessError) and isinstance(error, ValueError)
    assert error.message == str(error)
    assert exit_code_of(error) == EXIT_USAGE


# harness run --scenario: a pack only the worker may have


def test_a_pack_here_is_found_and_a_pack_name_unknown_here_is_passed_on_quietly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert pack_here("cities") is registry().get("cities")
    assert pack_here("weather-station") is None
    assert capsys.readouterr().err == ""


def test_a_name_close_to_a_pack_here_is_passed_on_with_a_did_you_mean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert pack_here("citys") is None
    assert capsys.readouterr().err.strip().splitlines() == [
        "harness: no pack 'citys' here (did you mean 'cities'?); the worker decides, and fails "
        "the run if it has none either"
    ]


@pytest.mark.parametrize("name", ["Cities", "", "two words", "x" * 65, "-cities"])
def test_a_name_no_pack_can_have_is_refused(name: str) -> None:
    with pytest.raises(InvalidInput, match="is not a pack name"):
        pack_here(name)


def test_a_run_of_a_pack_unknown_here_is_requested_as_named_even_offline_without_a_plan() -> None:
    request = commands.run_request(
        _run_args("Wind at the coast", "--scenario", "weather", "--provider", "scripted"),
        _settings(),
    )

    assert isinstance(request, RunRequest)
    assert request.scenario == "weather"
    assert request.plan is None


@pytest.mark.requires_local_server("`harness run` starts runs with the Harness* search attributes")
async def test_a_run_of_a_pack_the_worker_lacks_fails_naming_its_packs_and_exits_1(
    client: Client, task_queue: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _run_args("Wind at the coast", "--scenario", "weather", "--quiet")
    settings = _settings(
        TEMPORAL_ADDRESS=client.service_client.config.target_host, HARNESS_TASK_QUEUE=task_queue
    )

    async with running_worker(client, task_queue):
        code = await commands.run(args, settings)

    out = capsys.readouterr().out
    assert code == EXIT_FAILED_RUN
    assert "error: unknown scenario 'weather'" in out
    assert f"(available: {', '.join(registry().names())})" in out
    assert out.strip().splitlines()[-1].startswith("FAILED_VALIDATION")


# the real command, twice: a pack named in HARNESS_PACKS, and one that cannot load


def _harness(*args: str, packs: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [HARNESS, *args],
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            PACKS_VARIABLE: packs,
            "TEMPORAL_ADDRESS": UNREACHABLE,
        },
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_harness_scenarios_json_lists_a_pack_named_in_harness_packs_with_its_origin() -> None:
    done = _harness("scenarios", "--json", packs=WEATHER_VALUE)

    assert done.returncode == 0, done.stderr
    listed = {entry["name"]: entry for entry in json.loads(done.stdout)}
    assert listed["weather"] == {
        "name": "weather",
        "description": WEATHER.description,
        "origin": PACKS_VARIABLE,
        "tools": len(WEATHER.tools),
    }
    assert listed["cities"]["origin"] == "built-in"
    with registered(WEATHER) as both:
        assert sorted(listed) == both.names()


def test_a_pack_that_cannot_load_stops_scenarios_and_worker_with_one_line_and_exit_2() -> None:
    broken = "tests.no_such_pack_module:PACK"
    reason = (
        f"pack {broken} (HARNESS_PACKS): cannot load {broken}: ModuleNotFoundError: "
        "No module named 'tests.no_such_pack_module'"
    )

    listed = _harness("scenarios", packs=broken)
    served = _harness("worker", packs=broken)

    for done in (listed, served):
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.splitlines() == [f"harness: {reason}"]
