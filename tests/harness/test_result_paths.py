"""NODE_RESULT paths are checked against the producing tool's result schema before anything runs:
a field the result lacks, an index into a non-array, a step into a scalar is a validation issue
with a suggestion; what the schema cannot judge passes."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from harness.catalog.tools import ToolCatalog, ToolRole, ToolSpec
from harness.engine.result_paths import path_problem
from harness.engine.validation import IssueCode, validate_plan
from tests.factories import cities_catalog, codes, node, only, plan, ref


class Station(BaseModel):
    code: str
    tags: list[str]
    extra: dict[str, Any]


class Readings(BaseModel):
    station: Station
    values: list[float]
    note: str | None = None
    nearest: Station | None = None


SCHEMA = Readings.model_json_schema(mode="serialization")


@pytest.mark.parametrize(
    "path",
    [
        None,
        "",
        "station",
        "station.code",
        "station.tags.0",
        "values.-1",
        "station.extra.anything.deeper",
        "nearest.code",
        "note",
    ],
)
def test_a_path_the_result_schema_allows_has_no_problem(path: str | None) -> None:
    assert path_problem(SCHEMA, path) is None


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("staton", "the result has no field 'staton'; did you mean 'station'?"),
        ("station.zzz", "'station' has no field 'zzz'; its fields: code, tags, extra"),
        ("values.first", "'values' is an array: 'first' is not an index (0, 1, ... or -1)"),
        ("station.code.x", "'station.code' is a string: it has no 'x'"),
        ("nearest.cod", "'nearest' has no field 'cod'; did you mean 'code'?"),
        ("note.length", "'note' is a string: it has no 'length'"),
    ],
)
def test_a_path_the_result_schema_rules_out_says_where_and_why(path: str, problem: str) -> None:
    assert path_problem(SCHEMA, path) == problem


def test_a_result_of_any_shape_is_not_checked() -> None:
    assert path_problem({}, "a.b.0") is None
    assert path_problem({"type": "object"}, "a") is None


def test_a_wrong_path_into_a_cities_lookup_is_reported_with_did_you_mean() -> None:
    issues = validate_plan(_cities_plan(population_path="populaton"), cities_catalog())

    issue = only(issues, IssueCode.NODE_RESULT_BAD_PATH)
    assert issue.node_id == "report"
    assert issue.message == (
        "argument 'populations' reads path 'populaton' of 'pop' (get_population), but the "
        "result has no field 'populaton'; did you mean 'population'?"
    )


def test_a_path_the_cities_lookup_result_has_is_accepted() -> None:
    assert validate_plan(_cities_plan(population_path=None), cities_catalog()) == []


def test_a_bad_path_is_reported_with_the_plans_other_problems_at_once() -> None:
    wrong = _cities_plan(population_path="pop.0")
    wrong.nodes[2].tool = "summarise_city"
    wrong.nodes[1].deps = ["nowhere"]

    issues = validate_plan(wrong, cities_catalog())

    assert set(codes(issues)) >= {
        IssueCode.UNKNOWN_TOOL,
        IssueCode.UNKNOWN_DEPENDENCY,
        IssueCode.NODE_RESULT_BAD_PATH,
    }


def test_a_tool_without_a_result_schema_is_not_checked() -> None:
    plain = cities_catalog()
    untyped = ToolCatalog(
        scenario=plain.scenario,
        tools=[tool.model_copy(update={"result_schema": None}) for tool in plain.tools],
    )

    assert validate_plan(_cities_plan(population_path="no.such.field"), untyped) == []


def test_a_spec_from_a_result_model_carries_its_serialization_schema() -> None:
    spec = ToolSpec.from_model("r", "Readings.", Station, role=ToolRole.DATA, result=Readings)
    assert spec.result_schema == SCHEMA


def _cities_plan(population_path: str | None) -> Any:
    return plan(
        node("pop", "get_population", city="Lisbon"),
        node("tz", "get_timezone", city="Lisbon"),
        node("sum", "summarize_city", city="Lisbon"),
        node(
            "report",
            "aggregate_report",
            ref("populations", "pop", population_path),
            ref("timezones", "tz"),
            ref("summaries", "sum"),
            deps=["pop", "tz", "sum"],
        ),
    )


def test_a_run_from_before_the_check_validates_its_paths_as_it_did() -> None:
    wrong = _cities_plan(population_path="populaton")

    assert validate_plan(wrong, cities_catalog(), check_paths=False) == []
