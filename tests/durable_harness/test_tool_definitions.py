"""A function that cannot be a tool is refused where `@tool` decorates it (at import), with
one line that names the function and what to change: never later, on a worker, mid-run."""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from durable_harness import ToolContext, ToolDefinitionError, tool


def _refusal(decorate: Callable[[], object]) -> str:
    with pytest.raises(ToolDefinitionError) as refused:
        decorate()
    message = str(refused.value)
    assert "\n" not in message
    return message


def _where(name: str) -> str:
    return f"cannot make a tool of {__name__}.{name}"


def test_a_parameter_without_an_annotation_is_refused() -> None:
    def untyped(station) -> str:  # type: ignore[no-untyped-def]
        """Untyped."""
        return str(station)

    message = _refusal(lambda: tool(untyped))
    assert message.startswith(
        _where("test_a_parameter_without_an_annotation_is_refused.<locals>.untyped")
    )
    assert message.endswith("parameter 'station' has no type annotation")


def test_a_function_without_a_return_annotation_is_refused() -> None:
    def no_return(station: str):  # type: ignore[no-untyped-def]
        """No return type."""
        return station

    assert "it has no return annotation" in _refusal(lambda: tool(no_return))


def test_a_parameter_whose_type_is_not_json_is_refused() -> None:
    def takes_a_callback(callback: Callable[[], int]) -> int:
        """Takes a function."""
        return callback()

    message = _refusal(lambda: tool(takes_a_callback))
    assert "parameter 'callback': " in message and "is not a JSON type" in message


def test_a_return_type_that_is_not_json_is_refused() -> None:
    def returns_a_callback(x: int) -> Callable[[], int]:
        """Returns a function."""
        return lambda: x

    assert "the return type: " in _refusal(lambda: tool(returns_a_callback))


def test_a_default_that_is_not_json_is_refused() -> None:
    def odd_default(x: Any = object()) -> int:  # noqa: B008
        """An object as default."""
        return 1

    assert "its arguments are not JSON" in _refusal(lambda: tool(odd_default))


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="pydantic reads typing.TypedDict there")
def test_a_typed_dict_pydantic_cannot_read_is_refused_with_pydantics_reason() -> None:
    class Old(typing.TypedDict):
        a: int

    def returns_old(x: int) -> Old:
        """Returns a typing.TypedDict."""
        return {"a": x}

    returns_old.__annotations__["return"] = Old  # a local class: given resolved
    assert "Please use `typing_extensions.TypedDict`" in _refusal(lambda: tool(returns_old))


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("harness_status", "names starting with 'harness_' are the harness's own"),
        ("write_report", "'write_report' is the name of a built-in tool"),
        ("agent", "'agent' is the name of a built-in tool"),
    ],
)
def test_a_reserved_name_is_refused(name: str, reason: str) -> None:
    def fine(x: int) -> int:
        """Fine but for its name."""
        return x

    message = _refusal(lambda: tool(name=name)(fine))
    assert message.endswith(f"the name '{name}' is reserved ({reason}); pass name=...")


def test_a_reserved_function_name_is_refused_without_a_name_given() -> None:
    def write_report(x: int) -> int:
        """Would shadow the built-in report writer."""
        return x

    assert "the name 'write_report' is reserved" in _refusal(lambda: tool(write_report))


def test_a_name_the_providers_cannot_call_is_refused() -> None:
    def fine(x: int) -> int:
        """Fine but for its name."""
        return x

    assert "is not 1 to 64 letters, digits, _ or -" in _refusal(lambda: tool(name="a b")(fine))


def test_a_function_without_a_docstring_is_refused() -> None:
    def silent(x: int) -> int:
        return x

    assert "it has no docstring" in _refusal(lambda: tool(silent))


def test_variadic_parameters_are_refused() -> None:
    def variadic(*stations: str) -> int:
        """Many stations."""
        return len(stations)

    assert "parameter 'stations' is variadic positional" in _refusal(lambda: tool(variadic))


def test_an_annotation_that_cannot_be_resolved_is_refused() -> None:
    def unresolved(x: Nowhere) -> int:  # type: ignore[name-defined]  # noqa: F821
        """Names a type that does not exist."""
        return 1

    assert "an annotation cannot be resolved (name 'Nowhere'" in _refusal(lambda: tool(unresolved))


def test_two_context_parameters_are_refused() -> None:
    def twice(a: ToolContext, b: ToolContext) -> int:
        """Asks twice."""
        return 1

    assert "'a' and 'b' both ask for the context" in _refusal(lambda: tool(twice))


def test_an_argument_named_with_a_leading_underscore_is_refused() -> None:
    def private(_x: int) -> int:
        """A private-looking argument."""
        return _x

    assert "parameter '_x': argument names cannot start with _" in _refusal(lambda: tool(private))


def test_a_generator_is_refused() -> None:
    def readings(x: int) -> Iterator[int]:
        """Yields."""
        yield x

    assert "a generator cannot be a tool" in _refusal(lambda: tool(readings))


def test_what_is_not_a_function_is_refused() -> None:
    class Station:
        """A class."""

    assert "only a function (def or async def) can be a tool" in _refusal(lambda: tool(Station))


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"retries": 0}, "retries is 0; use 1 to 10 (attempts)"),
        ({"retries": 11}, "retries is 11; use 1 to 10 (attempts)"),
        ({"timeout": 0}, "timeout is 0; use more than 0 and at most 3600 seconds"),
        ({"timeout": 7200}, "timeout is 7200; use more than 0 and at most 3600 seconds"),
        ({"cost_hint": -1.0}, "cost_hint: Input should be greater than or equal to 0"),
    ],
)
def test_options_out_of_range_are_refused(options: dict[str, Any], said: str) -> None:
    def fine(x: int) -> int:
        """Fine but for its options."""
        return x

    assert _refusal(lambda: tool(**options)(fine)).endswith(said)
