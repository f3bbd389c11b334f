"""schema_problems: the subset of JSON schema that pydantic emits for tool arguments."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import JsonValue

from harness.catalog.schema_check import schema_problems
from tests.factories import synthetic_catalog, tool_spec

ROOT: dict[str, Any] = {
    "$defs": {
        "Fact": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
            "required": ["city", "population"],
        },
        "Colour": {"enum": ["red", "green"], "type": "string"},
    }
}


def problems(value: JsonValue, schema: dict[str, Any]) -> list[str]:
    return schema_problems(value, schema, ROOT)


def test_a_value_of_the_right_type_has_no_problems() -> None:
    assert problems("x", {"type": "string"}) == []
    assert problems(3, {"type": "number"}) == []
    assert problems(3.5, {"type": "number"}) == []
    assert problems([1], {"type": "array"}) == []
    assert problems(None, {"type": "null"}) == []
    assert problems({"any": 1}, {}) == []


def test_a_ref_is_resolved_through_the_root_defs() -> None:
    fact = {"$ref": "#/$defs/Fact"}

    assert problems({"city": "Paris", "population": 1}, fact) == []
    assert problems({"city": "Paris"}, fact) == ["missing field 'population'"]
    assert problems({"city": "Paris", "population": "many"}, fact) == [
        "population: expected integer, got string"
    ]


def test_items_of_an_array_are_checked_through_a_ref() -> None:
    schema = {"type": "array", "items": {"$ref": "#/$defs/Fact"}}

    assert problems([{"city": "A", "population": 1}, {"city": "B"}], schema) == [
        "item 1: missing field 'population'"
    ]


def test_any_of_with_null_accepts_null_and_the_other_type() -> None:
    optional_int = {"anyOf": [{"type": "integer"}, {"type": "null"}]}

    assert problems(None, optional_int) == []
    assert problems(7, optional_int) == []
    assert problems("7", optional_int) == [
        "expected integer, got string or expected null, got string"
    ]


@pytest.mark.parametrize("expected", ["integer", "number"])
def test_a_bool_is_not_an_integer_or_a_number(expected: str) -> None:
    assert problems(True, {"type": expected}) == [f"expected {expected}, got boolean"]


def test_a_bool_is_a_boolean() -> None:
    assert problems(False, {"type": "boolean"}) == []


def test_a_value_outside_an_enum_lists_the_allowed_values() -> None:
    assert problems("blue", {"$ref": "#/$defs/Colour"}) == ["'blue' is not one of 'red', 'green'"]
    assert problems("red", {"$ref": "#/$defs/Colour"}) == []


def test_a_const_must_match_exactly() -> None:
    assert problems("a", {"const": "a"}) == []
    assert problems("b", {"const": "a"}) == ["'b' is not 'a'"]


def test_numeric_bounds_are_checked() -> None:
    schema = {"type": "integer", "minimum": 0, "maximum": 10}

    assert problems(-1, schema) == ["-1 is less than the minimum 0"]
    assert problems(11, schema) == ["11 is more than the maximum 10"]
    assert problems(0, schema) == []
    assert problems(0, {"type": "number", "exclusiveMinimum": 0}) == ["0 must be more than 0"]
    assert problems(1, {"type": "number", "exclusiveMaximum": 1}) == ["1 must be less than 1"]


def test_string_and_array_lengths_are_checked() -> None:
    assert problems("", {"type": "string", "minLength": 1}) == ["has 0 characters, fewer than 1"]
    assert problems([1, 2, 3], {"type": "array", "maxItems": 2}) == ["has 3 items, more than 2"]


def test_an_unexpected_field_is_reported_only_when_additional_properties_is_false() -> None:
    closed = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}

    assert problems({"a": 1, "b": 2}, closed) == ["unexpected field 'b'"]
    assert problems({"a": 1, "b": 2}, {"type": "object", "properties": {"a": {}}}) == []


def test_the_synthetic_delay_schema_rejects_a_negative_delay() -> None:
    schema = tool_spec(synthetic_catalog(), "delay").arguments_schema

    assert schema_problems(-1, schema["properties"]["ms"], schema) == [
        "-1 is less than the minimum 0"
    ]
    assert schema_problems({"any": ["json"]}, schema["properties"]["value"], schema) == []
