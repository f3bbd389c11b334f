"""The Python API page's `@tool` example is a tool that works as the page says."""

from __future__ import annotations

import pytest

from durable_harness import ErrorCode, FunctionTool, ToolError
from tests.docs_pages import page, python_block_defining


@pytest.fixture(scope="module")
def wind_speed() -> FunctionTool[..., object]:
    snippet = python_block_defining(page("python-api"), "wind_speed")
    namespace: dict[str, object] = {"__name__": "docs_python_api"}
    exec(compile(snippet, "docs/python-api.md", "exec"), namespace)
    function_tool = namespace["wind_speed"]
    assert isinstance(function_tool, FunctionTool)
    return function_tool


def test_the_documented_tool_has_the_schema_and_options_the_page_says(
    wind_speed: FunctionTool[..., object],
) -> None:
    spec = wind_speed.spec
    station = spec.arguments_schema["properties"]["station"]
    assert station["description"] == "ICAO code of the station, e.g. 'EHAM'."
    assert spec.description.startswith("The latest wind reading at a weather station")
    assert spec.result_schema is not None and spec.result_schema["title"] == "Reading"
    assert (spec.max_attempts, spec.timeout_seconds) == (5, 10.0)


def test_the_documented_tool_fails_with_missing_info_for_an_unknown_station(
    wind_speed: FunctionTool[..., object],
) -> None:
    with pytest.raises(ToolError) as failed:
        wind_speed("LFPG")
    assert failed.value.code is ErrorCode.MISSING_INFO
