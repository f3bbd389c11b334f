"""`Pack`: `@tool` functions and `Tool` objects alike make a pack's catalog; a pack that cannot
be used (a bad name, a reserved tool name, two tools with one name, something not a tool) is
refused where it is written, in one line; a pack needs no check and no offline planner."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from activities.llm import ScriptedProvider
from durable_harness import Pack, PackDefinitionError, tool
from durable_harness.pack_types import CheckInput, PlanningError
from harness.engine.messages import PlanRequest
from tests.durable_harness.weather import WEATHER, wind_report, wind_speed


@tool(name="wind_speed")
def other_wind_speed(station: str) -> float:
    """Another wind reading, under the name of the first."""
    return 0.0


def test_a_pack_takes_tool_functions_and_tool_objects_alike() -> None:
    pack = Pack("gusts", "Gusts at stations.", [wind_speed, wind_report.tool])
    assert pack.catalog().names() == ["wind_speed", "wind_report"]
    assert pack.tool("wind_speed") is wind_speed.tool
    assert pack.tools == (wind_speed.tool, wind_report.tool)


def test_two_tools_with_one_name_are_refused_naming_both_functions() -> None:
    with pytest.raises(PackDefinitionError) as refused:
        Pack("gusts", "Gusts at stations.", [wind_speed, other_wind_speed])
    assert str(refused.value) == (
        "pack gusts: two tools are named 'wind_speed': tests.durable_harness.weather.wind_speed "
        "and tests.durable_harness.test_pack.other_wind_speed; give one of them another name"
    )


@pytest.mark.parametrize("name", ["harness_status", "write_report", "agent"])
def test_a_tool_object_with_a_reserved_name_is_refused(name: str) -> None:
    renamed = dataclasses.replace(
        wind_report.tool, spec=wind_report.spec.model_copy(update={"name": name})
    )
    with pytest.raises(PackDefinitionError, match=rf"^pack gusts: tool names \['{name}'\]"):
        Pack("gusts", "Gusts at stations.", [renamed])


@pytest.mark.parametrize("name", ["", "Weather", "1weather", "wind speed", "w" * 65])
def test_a_pack_name_that_cannot_name_a_scenario_is_refused(name: str) -> None:
    with pytest.raises(PackDefinitionError, match=r"^pack name .*: use 1 to 64 lowercase"):
        Pack(name, "Gusts at stations.", [wind_speed])


def test_a_function_not_made_a_tool_is_refused_with_what_to_do() -> None:
    def gust(station: str) -> float:
        return 0.0

    with pytest.raises(PackDefinitionError, match=r"^pack gusts: .* decorate the function"):
        Pack("gusts", "Gusts at stations.", [wind_speed, gust])  # type: ignore[list-item]


def test_a_pack_without_a_check_finds_no_problem_in_a_report() -> None:
    pack = Pack("gusts", "Gusts at stations.", [wind_speed])
    assert pack.report_problems(CheckInput(goal="g", report="", results={})) == []
    assert WEATHER.report_problems(CheckInput(goal="g", report="", results={})) == [
        "the report has no # Wind heading"
    ]


async def test_the_offline_provider_refuses_a_pack_without_an_offline_planner_in_one_line() -> None:
    pack = Pack("gusts", "Gusts at stations.", [wind_speed])
    request = PlanRequest(
        run_id="run-1", goal="How gusty?", scenario="gusts", attempt=1, catalog=pack.catalog()
    )
    with pytest.raises(PlanningError) as refused:
        await ScriptedProvider().plan(request, pack)
    assert str(refused.value) == (
        "the pack gusts has no offline planner, so pass --plan or choose an LLM provider"
    )


def test_a_pack_is_constructed_with_every_field_it_has_so_replace_keeps_them() -> None:
    fields = [field.name for field in dataclasses.fields(Pack) if field.init]
    assert list(inspect.signature(Pack).parameters) == fields
    guided = dataclasses.replace(WEATHER, instructions="Read EHAM first.")
    assert (guided.instructions, guided.check, guided.tools) == (
        "Read EHAM first.",
        WEATHER.check,
        WEATHER.tools,
    )
