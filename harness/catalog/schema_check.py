"""A small JSON-schema checker for the subset pydantic emits for tool arguments.

It lets the pure validator say INVALID_ARGUMENT before anything runs; the tool's own pydantic model
still validates every call at run time, so an unsupported keyword here only means a later error.

Why not the `jsonschema` library: the pure domain imports nothing but pydantic, this runs in
workflow code on every plan (a sandboxed import, replayed), and the subset pydantic emits for
tool arguments is small; every problem is reported at once with its argument's path, in the
validator's own words.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

_TYPE_CHECKS: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


def schema_problems(value: JsonValue, schema: dict[str, Any], root: dict[str, Any]) -> list[str]:
    """Return why `value` does not fit `schema` (empty when it fits)."""
    schema = _resolve(schema, root)
    if "anyOf" in schema:
        options = [schema_problems(value, option, root) for option in schema["anyOf"]]
        if any(not problems for problems in options):
            return []
        return [" or ".join(sorted({p for problems in options for p in problems}))]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(option) for option in schema["enum"])
        return [f"{value!r} is not one of {allowed}"]
    if "const" in schema and value != schema["const"]:
        return [f"{value!r} is not {schema['const']!r}"]
    expected = schema.get("type")
    if expected is not None and not _has_type(value, expected):
        return [f"expected {expected}, got {_json_type(value)}"]
    return _bounds_problems(value, schema, root)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    resolved = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
    return resolved if isinstance(resolved, dict) else {}


def _has_type(value: JsonValue, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    for name in names:
        if name == "null" and value is None:
            return True
        python_type = _TYPE_CHECKS.get(name)
        if python_type is None:
            continue
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if isinstance(value, python_type):
            return True
    return False


def _json_type(value: JsonValue) -> str:
    if value is None:
        return "null"
    for name, python_type in _TYPE_CHECKS.items():
        if isinstance(value, python_type) and not (isinstance(value, bool) and name != "boolean"):
            return name
    return type(value).__name__


def _bounds_problems(value: JsonValue, schema: dict[str, Any], root: dict[str, Any]) -> list[str]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number_problems(value, schema)
    if isinstance(value, str):
        return _length_problems(len(value), schema, "minLength", "maxLength", "characters")
    if isinstance(value, list):
        problems = _length_problems(len(value), schema, "minItems", "maxItems", "items")
        item_schema = schema.get("items")
        if isinstance(item_schema, dict):
            for index, item in enumerate(value):
                problems += [f"item {index}: {p}" for p in schema_problems(item, item_schema, root)]
        return problems
    if isinstance(value, dict):
        return _object_problems(value, schema, root)
    return []


def _number_problems(value: float, schema: dict[str, Any]) -> list[str]:
    problems = []
    if "minimum" in schema and value < schema["minimum"]:
        problems.append(f"{value} is less than the minimum {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        problems.append(f"{value} is more than the maximum {schema['maximum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        problems.append(f"{value} must be more than {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        problems.append(f"{value} must be less than {schema['exclusiveMaximum']}")
    return problems


def _length_problems(
    length: int, schema: dict[str, Any], low: str, high: str, unit: str
) -> list[str]:
    problems = []
    if low in schema and length < schema[low]:
        problems.append(f"has {length} {unit}, fewer than {schema[low]}")
    if high in schema and length > schema[high]:
        problems.append(f"has {length} {unit}, more than {schema[high]}")
    return problems


def _object_problems(
    value: dict[str, JsonValue], schema: dict[str, Any], root: dict[str, Any]
) -> list[str]:
    properties: dict[str, Any] = schema.get("properties", {})
    problems = [
        f"missing field {name!r}" for name in schema.get("required", []) if name not in value
    ]
    for name, item in value.items():
        if name in properties:
            problems += [f"{name}: {p}" for p in schema_problems(item, properties[name], root)]
        elif schema.get("additionalProperties") is False:
            problems.append(f"unexpected field {name!r}")
    return problems
