"""Whether a NODE_RESULT path can name something in a result, read from the producing tool's
result schema before anything runs: the same steps `binding.read_path` takes at run time (a
field of an object, an index of an array), taken over the schema instead of the value.

Only what the schema rules out is a problem: a tool without a result schema, an object whose
fields are free, or a value of any type is not checked, so a path the schema cannot judge
passes here and is judged by the value when the node runs.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

_INDEX = re.compile(r"-?[0-9]+")
_SCALARS = {"string", "integer", "number", "boolean", "null"}


def path_problem(schema: dict[str, Any], path: str | None) -> str | None:
    """Why `path` cannot name anything in a result of `schema` (None: it may)."""
    if not path:
        return None
    return _walk(schema, schema, path.split("."), [])


def _walk(
    schema: dict[str, Any], root: dict[str, Any], steps: list[str], done: list[str]
) -> str | None:
    schema = _resolve(schema, root)
    if not steps:
        return None
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        live = [
            o for o in options if isinstance(o, dict) and _resolve(o, root).get("type") != "null"
        ]
        problems = [_walk(option, root, steps, done) for option in live]
        if not live or any(problem is None for problem in problems):
            return None
        return next(problem for problem in problems if problem is not None)
    step, rest = steps[0], steps[1:]
    where = f"'{'.'.join(done)}'" if done else "the result"
    kind = schema.get("type")
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        if step in properties:
            return _walk(properties[step], root, rest, [*done, step])
        if schema.get("additionalProperties") not in (None, False):
            return None  # a field beyond the named ones may be there
        return f"{where} has no field '{step}'{_suggestion(step, list(properties))}"
    if kind == "array" or "items" in schema:
        if not _INDEX.fullmatch(step):
            return f"{where} is an array: '{step}' is not an index (0, 1, ... or -1)"
        items = schema.get("items")
        return _walk(items, root, rest, [*done, step]) if isinstance(items, dict) else None
    if isinstance(kind, str) and kind in _SCALARS:
        return f"{where} is a {kind}: it has no '{step}'"
    return None


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    resolved = (root.get("$defs") or {}).get(ref.removeprefix("#/$defs/"))
    return resolved if isinstance(resolved, dict) else {}


def _suggestion(step: str, fields: list[str]) -> str:
    close = difflib.get_close_matches(step, fields, n=1)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f"; its fields: {', '.join(fields)}"
