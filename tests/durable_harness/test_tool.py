"""`@tool` makes a typed function the catalog's tool: its spec from the signature, docstring,
return type and options; its run with the context injected, a sync function in a thread, an
async one on the loop. No server: the tools are called as the tool activity calls them
(`Tool.call`), which test_tool_activity.py does through the activity itself."""

from __future__ import annotations

import dataclasses
import threading

import pytest
from pydantic import BaseModel, ValidationError

import durable_harness
from activities.llm import ScriptedProvider
from activities.llm.prompts import planner_system
from durable_harness import ErrorCode, ToolContext, ToolError, tool
from harness.catalog.tools import ToolRole, ToolSpec
from harness.core import errors
from scenarios import base
from tests.durable_harness.weather import (
    WEATHER,
    Reading,
    leaky,
    seen_async,
    seen_sync,
    wind_report,
    wind_speed,
)


def _context(attempt: int = 1) -> ToolContext:
    return ToolContext(run_id="run-1", node_id="n1", attempt=attempt, writer=ScriptedProvider())


async def _call(
    function_tool: durable_harness.FunctionTool[..., object], **arguments: object
) -> object:
    """Call the tool as the tool activity does: validate the arguments, then `Tool.call`."""
    catalog_tool = function_tool.tool
    return await catalog_tool.call(catalog_tool.arguments.model_validate(arguments), _context())


def test_the_public_package_exports_what_a_tool_author_needs() -> None:
    assert set(durable_harness.__all__) >= {"tool", "ToolContext", "ToolError", "ErrorCode"}
    assert all(hasattr(durable_harness, name) for name in durable_harness.__all__)


def test_the_public_tool_error_and_context_are_the_ones_the_tool_activity_knows() -> None:
    assert (ToolError, ErrorCode, ToolContext) == (
        errors.ToolError,
        errors.ErrorCode,
        base.ToolContext,
    )


def test_the_argument_schema_comes_from_the_signature() -> None:
    schema = wind_speed.spec.arguments_schema
    assert schema["required"] == ["station"]
    assert schema["properties"]["station"]["type"] == "string"
    assert schema["properties"]["unit"] == {"default": "m/s", "title": "Unit", "type": "string"}


def test_an_annotated_field_description_describes_its_argument() -> None:
    station = wind_speed.spec.arguments_schema["properties"]["station"]
    assert station["description"] == "ICAO code of the station, e.g. 'EHAM'."


def test_the_description_is_the_docstrings_first_paragraph_on_one_line() -> None:
    @tool
    def spread(x: int) -> int:
        """Spreads the value
        over two lines.

        A second paragraph the planner does not read."""
        return x

    assert spread.spec.description == "Spreads the value over two lines."


def test_the_tool_is_named_after_its_function_unless_given_a_name() -> None:
    @tool(name="other-name")
    def named(x: int) -> int:
        """Named otherwise."""
        return x

    assert (wind_speed.spec.name, named.spec.name) == ("wind_speed", "other-name")


def test_a_tool_context_parameter_is_left_out_of_the_schema() -> None:
    assert seen_async.spec.argument_names() == ["label"]
    assert seen_sync.spec.argument_names() == ["label"]


async def test_a_tool_context_parameter_is_given_the_calls_context() -> None:
    seen = await _call(seen_sync, label="x")
    assert isinstance(seen, dict)
    assert (seen["run_id"], seen["node_id"], seen["attempt"]) == ("run-1", "n1", 1)


async def test_a_sync_tool_runs_in_a_thread_off_the_event_loop() -> None:
    seen = await _call(seen_sync, label="x")
    assert isinstance(seen, dict) and seen["thread"] != threading.get_ident()


async def test_an_async_tool_runs_on_the_event_loop() -> None:
    seen = await _call(seen_async)
    assert isinstance(seen, dict) and seen["thread"] == threading.get_ident()


def test_a_model_return_type_becomes_the_result_schema() -> None:
    assert wind_speed.spec.result_schema == Reading.model_json_schema(mode="serialization")


def test_a_typed_dict_return_type_becomes_the_result_schema() -> None:
    schema = seen_sync.spec.result_schema
    assert schema is not None and schema["required"] == ["run_id", "node_id", "attempt", "thread"]


def test_a_list_or_optional_of_models_becomes_the_result_schema() -> None:
    @tool
    def readings(station: str) -> list[Reading]:
        """Every reading of a station."""
        return []

    @tool
    def latest(station: str) -> Reading | None:
        """The latest reading of a station, if any."""
        return None

    listed, optional = readings.spec.result_schema, latest.spec.result_schema
    assert listed is not None and listed["type"] == "array"
    assert listed["items"] == {"$ref": "#/$defs/Reading"}
    assert optional is not None and {"type": "null"} in optional["anyOf"]


def test_any_other_return_type_gives_no_result_schema() -> None:
    assert wind_report.spec.result_schema is None


def test_a_spec_without_a_result_schema_is_written_as_before_the_field_existed() -> None:
    assert "result_schema" not in wind_report.spec.model_dump()
    assert "result_schema" in wind_speed.spec.model_dump()


async def test_a_model_result_is_returned_as_its_json() -> None:
    assert await _call(wind_speed, station="EHAM", unit="kn") == {
        "station": "EHAM",
        "speed": 14.6,
        "unit": "kn",
    }


async def test_model_arguments_reach_the_function_as_models() -> None:
    readings = [{"station": "EHAM", "speed": 7.5, "unit": "m/s"}]
    assert await _call(wind_report, readings=readings) == "# Wind\n- EHAM: 7.5 m/s"


async def test_a_result_that_its_return_type_refuses_fails_the_call() -> None:
    @tool
    def wrong(station: str) -> Reading:
        """Returns half a reading."""
        return {"station": station}  # type: ignore[return-value]

    with pytest.raises(TypeError, match="wrong returned what its return type refuses: speed"):
        await _call(wrong, station="EHAM")


async def test_a_tool_error_raised_by_the_function_reaches_the_caller_with_its_code() -> None:
    with pytest.raises(ToolError) as failed:
        await _call(wind_speed, station="LFPG")
    assert failed.value.code is ErrorCode.MISSING_INFO


async def test_other_exceptions_reach_the_caller_unchanged() -> None:
    with pytest.raises(RuntimeError, match="could not log in"):
        await _call(leaky, station="EHAM")


def test_the_decorated_function_is_still_callable_as_written() -> None:
    assert wind_speed("KJFK") == Reading(station="KJFK", speed=4.0, unit="m/s")
    assert wind_speed.__name__ == "wind_speed" and wind_speed.__doc__ is not None


def test_the_defaults_are_a_data_tool_as_the_catalog_defaults_it() -> None:
    @tool
    def plain(x: int) -> int:
        """A plain tool."""
        return x

    expected = ToolSpec(
        name="plain",
        description="A plain tool.",
        arguments_schema=plain.spec.arguments_schema,
    )
    assert plain.spec == expected


def test_the_options_map_onto_the_tool_spec() -> None:
    @tool(
        name="pay",
        side_effects=True,
        idempotent=True,
        requires_approval=True,
        retries=5,
        timeout=30,
        cost_hint=4.0,
        local=True,
        final=True,
        uses_llm=True,
    )
    def pay(amount: int) -> str:
        """Pays."""
        return "paid"

    spec = pay.spec
    assert (spec.name, spec.role, spec.cost_hint) == ("pay", ToolRole.FINAL_SYNTHESIS, 4.0)
    assert (spec.side_effects, spec.idempotent, spec.requires_approval) == (True, True, True)
    assert (spec.max_attempts, spec.timeout_seconds) == (5, 30.0)
    assert (spec.local, spec.uses_llm) == (True, True)
    assert spec.retry_problems() == []


def test_a_tool_error_takes_its_code_by_name() -> None:
    assert ToolError("MISSING_INFO", "no such city").code is ErrorCode.MISSING_INFO


def test_a_tool_error_with_a_name_that_is_no_code_says_the_closest() -> None:
    with pytest.raises(
        ValueError, match="'MISSNG_INFO' is not an error code; did you mean 'MISSING_INFO'"
    ):
        ToolError("MISSNG_INFO", "no such city")


def test_the_arguments_model_refuses_what_the_signature_refuses() -> None:
    with pytest.raises(ValidationError):
        wind_speed.tool.arguments.model_validate({"unit": "kn"})
    assert issubclass(wind_speed.tool.arguments, BaseModel)


def test_the_planner_reads_a_typed_tools_result_schema_and_no_other() -> None:
    catalog = WEATHER.catalog()
    prompt = planner_system(catalog)
    described = {part.split(None, 1)[0]: part for part in prompt.split("\n## ")[1:]}
    assert "\nResult: Reading\n" in described["wind_speed"]
    assert "\nReading = {station: string, speed: number, unit: string}\n" in prompt
    assert "Result:" not in described["wind_report"]


@pytest.mark.parametrize("name", ["harness_status", "write_report", "agent"])
def test_a_scenario_may_not_give_its_own_tool_a_reserved_name(name: str) -> None:
    renamed = dataclasses.replace(
        wind_report.tool, spec=wind_report.spec.model_copy(update={"name": name})
    )
    with pytest.raises(ValueError, match=rf"pack weather: tool names \['{name}'\] are reserved"):
        dataclasses.replace(WEATHER, tools=(renamed,))
