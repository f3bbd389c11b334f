"""resolve_arguments and read_path: literals, node results, paths and array collection."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from harness.engine.binding import BindingError, is_array_argument, read_path, resolve_arguments
from tests.factories import (
    cities_catalog,
    lit,
    node,
    ref,
    schema_spec,
    synthetic_catalog,
    tool_spec,
)

DELAY = tool_spec(synthetic_catalog(), "delay")
COLLECT = tool_spec(synthetic_catalog(), "collect")
REPORT = tool_spec(cities_catalog(), "aggregate_report")


def test_literal_bindings_are_used_as_given() -> None:
    arguments = resolve_arguments(node("a", "delay", ms=5, value={"k": [1, 2]}), DELAY, {})

    assert arguments == {"ms": 5, "value": {"k": [1, 2]}}


def test_a_node_result_without_a_path_is_the_whole_result() -> None:
    results: dict[str, JsonValue] = {"src": {"ms": 3, "value": "x"}}

    arguments = resolve_arguments(node("b", "delay", ref("value", "src"), ms=1), DELAY, results)

    assert arguments == {"value": {"ms": 3, "value": "x"}, "ms": 1}


def test_a_node_result_path_follows_dict_keys() -> None:
    results: dict[str, JsonValue] = {"src": {"outer": {"inner": 42}}}

    arguments = resolve_arguments(
        node("b", "delay", ref("ms", "src", "outer.inner")), DELAY, results
    )

    assert arguments == {"ms": 42}


def test_a_node_result_path_follows_list_indexes() -> None:
    results: dict[str, JsonValue] = {"src": {"items": [{"ms": 1}, {"ms": 2}]}}

    arguments = resolve_arguments(
        node("b", "delay", ref("ms", "src", "items.1.ms")), DELAY, results
    )

    assert arguments == {"ms": 2}


def test_a_negative_list_index_counts_from_the_end() -> None:
    assert read_path([10, 20, 30], "-1") == 30


def test_array_bindings_are_collected_in_binding_order() -> None:
    results: dict[str, JsonValue] = {"a": "first", "b": {"n": 2}}
    collector = node("out", "collect", ref("inputs", "a"), lit("inputs", 1.5), ref("inputs", "b"))

    arguments = resolve_arguments(collector, COLLECT, results)

    assert arguments == {"inputs": ["first", 1.5, {"n": 2}]}


def test_a_list_value_bound_to_an_array_argument_is_spread() -> None:
    results: dict[str, JsonValue] = {"a": [1, 2], "b": 3}
    collector = node("out", "collect", ref("inputs", "a"), ref("inputs", "b"), lit("inputs", [4]))

    arguments = resolve_arguments(collector, COLLECT, results)

    assert arguments == {"inputs": [1, 2, 3, 4]}


def test_one_result_per_city_is_collected_into_the_report_arguments() -> None:
    results: dict[str, JsonValue] = {
        "pop_paris": {"city": "Paris"},
        "pop_tokyo": {"city": "Tokyo"},
        "tz_paris": {"city": "Paris"},
    }
    report = node(
        "report",
        "aggregate_report",
        ref("populations", "pop_paris"),
        ref("timezones", "tz_paris"),
        ref("populations", "pop_tokyo"),
        lit("missing_cities", ["Atlantis"]),
    )

    arguments = resolve_arguments(report, REPORT, results)

    assert arguments == {
        "populations": [{"city": "Paris"}, {"city": "Tokyo"}],
        "timezones": [{"city": "Paris"}],
        "missing_cities": ["Atlantis"],
    }


def test_an_optional_array_argument_counts_as_an_array() -> None:
    optional_list = schema_spec(
        "t", {"tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}}
    )

    assert is_array_argument(optional_list, "tags")
    assert not is_array_argument(DELAY, "ms")
    assert not is_array_argument(DELAY, "no_such_argument")


def test_a_node_result_from_a_node_without_a_result_is_a_binding_error() -> None:
    with pytest.raises(BindingError, match="no result from node 'ghost'"):
        resolve_arguments(node("b", "delay", ref("ms", "ghost")), DELAY, {"a": 1})


@pytest.mark.parametrize(
    "path",
    ["missing", "items.5", "items.-3", "items.x", "items.0.deeper", "count.0"],
)
def test_a_path_that_is_not_in_the_result_is_a_binding_error(path: str) -> None:
    results: dict[str, JsonValue] = {"src": {"items": [1, 2], "count": 2}}

    with pytest.raises(BindingError, match="has no"):
        resolve_arguments(node("b", "delay", ref("ms", "src", path)), DELAY, results)


@pytest.mark.parametrize("step", ["--1", "²"], ids=["double-minus", "superscript-two"])
def test_a_malformed_list_index_in_a_path_is_a_binding_error(step: str) -> None:
    # BUG (harness/engine/binding.py, read_path): `step.lstrip("-").isdigit()` accepts "--1" and
    # superscript digits such as "²", then `int(step)` raises ValueError. Callers (the workflow's
    # _execute_node) only catch BindingError, so a planner-written path like this crashes the
    # workflow task instead of failing the node with INVALID_ARGUMENT.
    with pytest.raises(BindingError):
        read_path([10, 20], step)
