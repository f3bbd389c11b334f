"""The pack registry: the built-in scenarios are packs registered under the entry point group
`durable_harness.packs`; an installed pack is loaded from its entry point with its distribution
as origin; a pack that cannot load, or two with one name, is refused in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from durable_harness import Pack
from scenarios.management import MANAGEMENT_TOOL_NAMES
from scenarios.registry import (
    BUILT_IN,
    BUILT_IN_PACKS,
    PACK_ENTRY_POINTS,
    PACKS_VARIABLE,
    PackLoadError,
    UnknownScenarioError,
    load_packs,
    registered,
    registry,
)
from tests.durable_harness.weather import WEATHER

ROOT = Path(__file__).parent.parent.parent
WEATHER_VALUE = "tests.durable_harness.weather:WEATHER"


def _entry(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=PACK_ENTRY_POINTS)


def test_the_built_in_scenarios_are_packs_listed_by_the_registry() -> None:
    loaded = registry().loaded()
    assert [(each.pack.name, each.origin) for each in loaded] == [
        (name, BUILT_IN)
        for name in ("cities", "games", "incidents", "refunds", "repo", "synthetic")
    ]
    assert all(isinstance(each.pack, Pack) for each in loaded)


def test_the_project_registers_its_built_in_packs_through_the_entry_point_group() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["entry-points"][PACK_ENTRY_POINTS]
    assert sorted(declared.values()) == sorted(BUILT_IN_PACKS)
    assert all(value.startswith(f"scenarios.{name}:") for name, value in declared.items())


def test_an_installed_pack_is_loaded_from_its_entry_point_with_the_shared_tools() -> None:
    loaded = load_packs([_entry("weather", WEATHER_VALUE)])
    assert loaded["weather"].origin == f"entry point weather = {WEATHER_VALUE}"
    names = loaded["weather"].pack.catalog().names()
    assert names[: len(WEATHER.tools)] == WEATHER.catalog().names()
    assert set(MANAGEMENT_TOOL_NAMES) <= set(names)


def test_an_installed_distributions_pack_is_found_with_its_name_and_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "weather_pack-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: weather-pack\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text(f"[{PACK_ENTRY_POINTS}]\nweather = {WEATHER_VALUE}\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])

    loaded = load_packs()

    assert loaded["weather"].origin == "weather-pack 1.2"
    assert loaded["cities"].origin == BUILT_IN


def test_a_pack_named_in_harness_packs_is_loaded_with_that_origin() -> None:
    loaded = load_packs([], {PACKS_VARIABLE: f" {WEATHER_VALUE} ,"})
    assert (loaded["weather"].origin, loaded["weather"].pack.description) == (
        PACKS_VARIABLE,
        WEATHER.description,
    )


def test_a_pack_both_installed_and_named_in_harness_packs_is_refused_naming_both() -> None:
    with pytest.raises(PackLoadError) as refused:
        load_packs([_entry("weather", WEATHER_VALUE)], {PACKS_VARIABLE: WEATHER_VALUE})
    assert str(refused.value) == (
        f"two packs are named weather: from entry point weather = {WEATHER_VALUE} and from "
        f"{PACKS_VARIABLE}; uninstall or rename one"
    )


def test_an_entry_point_naming_a_built_in_pack_is_that_pack_not_a_second_one() -> None:
    loaded = load_packs([_entry("cities", "scenarios.cities:SCENARIO")])
    assert sorted(loaded) == sorted(value.split(".")[1].split(":")[0] for value in BUILT_IN_PACKS)


def test_two_packs_with_one_name_are_refused_naming_both_origins() -> None:
    with pytest.raises(PackLoadError) as refused:
        load_packs([_entry("weather", WEATHER_VALUE), _entry("wind", WEATHER_VALUE)])
    assert str(refused.value) == (
        f"two packs are named weather: from entry point weather = {WEATHER_VALUE} and from "
        f"entry point wind = {WEATHER_VALUE}; uninstall or rename one"
    )


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("no_such_pack_module:PACK", "cannot load no_such_pack_module:PACK: ModuleNotFoundError"),
        ("tests.durable_harness.weather:NOPE", "AttributeError"),
        ("tests.durable_harness.weather:STATIONS", "is a dict, not a Pack"),
        ("tests.durable_harness.weather", "is not module:attribute"),
    ],
)
def test_a_pack_that_cannot_load_is_refused_in_one_line_naming_it(value: str, reason: str) -> None:
    with pytest.raises(PackLoadError) as refused:
        load_packs([_entry("broken", value)])
    message = str(refused.value)
    assert message.startswith(f"pack broken (entry point broken = {value}): ")
    assert reason in message
    assert "\n" not in message


def test_an_unknown_pack_is_refused_with_the_closest_name() -> None:
    with pytest.raises(UnknownScenarioError, match="did you mean 'cities'"):
        registry().get("citties")


def test_a_registered_pack_is_known_only_inside_its_block() -> None:
    with registered(WEATHER) as inside:
        assert registry() is inside
        assert registry().get("weather").tool("wind_speed") is WEATHER.tool("wind_speed")
    assert "weather" not in registry().names()


def test_a_registered_pack_may_not_take_a_built_in_packs_name() -> None:
    cities = Pack("cities", "Another cities.", WEATHER.tools)
    with (
        pytest.raises(
            PackLoadError, match="two packs are named cities: from built-in and from test"
        ),
        registered(cities),
    ):
        pass
    assert registry().get("cities").description != "Another cities."


def test_a_worker_with_a_pack_that_cannot_load_stops_before_connecting_with_exit_2(
    tmp_path: Path,
) -> None:
    info = tmp_path / "broken_pack-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-pack\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{PACK_ENTRY_POINTS}]\nbroken = no_such_module:P\n")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
        "TEMPORAL_ADDRESS": "127.0.0.1:1",  # never reached: the pack stops it first
    }

    done = subprocess.run(
        [sys.executable, "-m", "worker"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )

    assert done.returncode == 2
    lines = [json.loads(line) for line in (done.stdout + done.stderr).splitlines() if line]
    assert [(line["event"], line["error"]) for line in lines] == [
        (
            "worker.config_error",
            "pack broken (broken-pack 0.1): cannot load no_such_module:P: "
            "ModuleNotFoundError: No module named 'no_such_module'",
        )
    ]
