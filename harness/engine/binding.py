"""Turning a node's argument bindings into concrete arguments.

Rule for array arguments: an array argument may be bound several times; every binding adds its
value to the list, in order, and a value that is itself a list is spread. This lets a node collect
the results of many dependencies into one argument (e.g. every city's population into
`populations`). Any other argument takes exactly one binding, used as is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import JsonValue

from harness.catalog.tools import ToolSpec
from harness.core.plan import ArgumentBinding, ArgumentKind, PlanNode

_INDEX = re.compile(r"-?[0-9]+")


class BindingError(Exception):
    """A NODE_RESULT binding that cannot be resolved (missing result, bad path)."""


def is_array_argument(tool: ToolSpec, name: str) -> bool:
    schema = tool.arguments_schema.get("properties", {}).get(name, {})
    return _is_array_schema(schema)


def _is_array_schema(schema: dict[str, Any]) -> bool:
    if schema.get("type") == "array":
        return True
    options = schema.get("anyOf", [])
    return any(isinstance(o, dict) and o.get("type") == "array" for o in options)


def resolve_arguments(
    node: PlanNode, tool: ToolSpec, results: Mapping[str, JsonValue]
) -> dict[str, JsonValue]:
    """Concrete arguments for `node`, reading NODE_RESULT bindings from `results`."""
    arguments: dict[str, JsonValue] = {}
    for binding in node.arguments:
        value = _binding_value(binding, results)
        if not is_array_argument(tool, binding.name):
            arguments[binding.name] = value
            continue
        collected = arguments.setdefault(binding.name, [])
        assert isinstance(collected, list)
        if isinstance(value, list):
            collected.extend(value)
        else:
            collected.append(value)
    return arguments


def _binding_value(binding: ArgumentBinding, results: Mapping[str, JsonValue]) -> JsonValue:
    if binding.kind is ArgumentKind.LITERAL:
        return binding.value
    if binding.node_id is None or binding.node_id not in results:
        raise BindingError(f"argument '{binding.name}': no result from node '{binding.node_id}'")
    return read_path(results[binding.node_id], binding.path)


def read_path(value: JsonValue, path: str | None) -> JsonValue:
    """Follow a dotted path ('a.b.0') into a JSON value."""
    if not path:
        return value
    current = value
    for step in path.split("."):
        if isinstance(current, dict) and step in current:
            current = current[step]
        elif (
            isinstance(current, list)
            and _INDEX.fullmatch(step)
            and -len(current) <= int(step) < len(current)
        ):
            current = current[int(step)]
        else:
            raise BindingError(f"path '{path}' has no '{step}' in the result")
    return current
