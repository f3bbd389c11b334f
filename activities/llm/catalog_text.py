"""The tool catalog as the planner reads it: each schema in a compact, TypeScript-like notation
(`{city: string, year?: integer}`, `Fact[]`, `"a" | "b"`), and every named type (a schema's
`$defs`, a typed result) written once, in one `Types:` section, however many tools use it.

Raw JSON schemas repeat `title`, `type` and every shared `$defs` per tool; this says the same in
a third of the characters, which is what a small model's context and a hosted model's bill see.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from harness.catalog.tools import ToolSpec

_BOUNDS = (
    ("minimum", "maximum", ""),
    ("minLength", "maxLength", " chars"),
    ("minItems", "maxItems", " items"),
)


@dataclass
class TypeTable:
    """The named types of a catalog: a name for each distinct schema, in first-seen order. Two
    different schemas of one name (two packs' `Item`) get `Item`, `Item2`."""

    named: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The shown name -> the schema."""
    refs: dict[tuple[int, str], str] = field(default_factory=dict)
    """(id of the schema's root, its `$defs` name) -> the shown name."""

    def add(self, name: str, schema: dict[str, Any]) -> str:
        for shown, known in self.named.items():
            if _base(shown) == name and known == schema:
                return shown
        shown, n = name, 1
        while shown in self.named:
            n += 1
            shown = f"{name}{n}"
        self.named[shown] = schema
        return shown

    def collect(self, root: dict[str, Any]) -> None:
        """Name every `$defs` entry of one schema (a `$ref` is local to its own root)."""
        for name, schema in (root.get("$defs") or {}).items():
            if isinstance(schema, dict) and schema:  # an empty one (JsonValue) is `any`
                self.refs[(id(root), name)] = self.add(name, schema)

    def named_object(self, schema: dict[str, Any], roots: dict[int, dict[str, Any]]) -> str | None:
        """A root object schema's own name (its model's title), entered in Types: so that a
        result and the argument items it becomes, or tools with one argument model, share one
        line. None: the schema is not a titled object."""
        title = schema.get("title")
        if not isinstance(title, str) or not schema.get("properties"):
            return None
        own = {key: value for key, value in schema.items() if key not in ("$defs", "description")}
        name = self.add(title, own)
        roots.setdefault(id(self.named[name]), schema)
        return name

    def render_types(self, roots: dict[int, dict[str, Any]]) -> str:
        lines = []
        for shown, schema in self.named.items():
            root = roots.get(id(schema), schema)
            lines.append(f"{shown} = {self.render(schema, root)}")
        return "\n".join(lines)

    def render(self, schema: dict[str, Any], root: dict[str, Any]) -> str:
        """One schema, inline."""
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            return self.refs.get((id(root), name), "any")
        if "anyOf" in schema or "oneOf" in schema:
            options = schema.get("anyOf") or schema.get("oneOf") or []
            text = " | ".join(self.render(option, root) for option in options)
        elif "enum" in schema:
            text = " | ".join(json.dumps(value) for value in schema["enum"])
        elif "const" in schema:
            text = json.dumps(schema["const"])
        else:
            text = self._typed(schema, root)
        return text + _bounds(schema)

    def _typed(self, schema: dict[str, Any], root: dict[str, Any]) -> str:
        kind = schema.get("type")
        if isinstance(kind, list):
            return " | ".join(self._typed({**schema, "type": one}, root) for one in kind)
        if kind == "array" or "items" in schema:
            items = schema.get("items")
            inner = self.render(items, root) if isinstance(items, dict) else "any"
            return f"({inner})[]" if " | " in inner else f"{inner}[]"
        if kind == "object" or "properties" in schema:
            return self._object(schema, root)
        return str(kind) if kind else "any"

    def _object(self, schema: dict[str, Any], root: dict[str, Any]) -> str:
        properties = schema.get("properties")
        if not properties:
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"{{[key: string]: {self.render(extra, root)}}}"
            return "object"
        fields = ", ".join(
            self.field(name, value, name in schema.get("required", []), root, inline=True)
            for name, value in properties.items()
        )
        return f"{{{fields}}}"

    def field(
        self,
        name: str,
        schema: dict[str, Any],
        required: bool,
        root: dict[str, Any],
        *,
        inline: bool,
    ) -> str:
        if not required and schema.get("default", ...) is None:  # absent is null already
            schema = _without_null(schema)
        text = f"{name}{'' if required else '?'}: {self.render(schema, root)}"
        if "default" in schema and schema["default"] is not None:
            text += f" = {json.dumps(schema['default'])}"
        description = schema.get("description")
        if isinstance(description, str) and description:
            text += f" ({description})" if inline else f" - {description}"
        return text

    def arguments(self, schema: dict[str, Any]) -> str:
        """A tool's arguments: one line each, the way a call is written."""
        properties = schema.get("properties") or {}
        if not properties:
            return "Arguments: none"
        required = schema.get("required", [])
        lines = [
            f"- {self.field(name, value, name in required, schema, inline=False)}"
            for name, value in properties.items()
        ]
        return "Arguments:\n" + "\n".join(lines)


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    options = [option for option in schema.get("anyOf", []) if option.get("type") != "null"]
    if len(options) != 1:
        return schema
    rest = {key: value for key, value in schema.items() if key not in ("anyOf", "default")}
    return {**options[0], **rest}


def _base(shown: str) -> str:
    return shown.rstrip("0123456789") or shown


def _bounds(schema: dict[str, Any]) -> str:
    parts = []
    for low_key, high_key, unit in _BOUNDS:
        low, high = schema.get(low_key), schema.get(high_key)
        if low is not None and high is not None:
            parts.append(f"{low}..{high}{unit}")
        elif low is not None:
            parts.append(f">={low}{unit}")
        elif high is not None:
            parts.append(f"<={high}{unit}")
    for key, sign in (("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
        if key in schema:
            parts.append(f"{sign}{schema[key]}")
    if "pattern" in schema:
        parts.append(f"matching {schema['pattern']}")
    if "format" in schema:
        parts.append(str(schema["format"]))
    return f" ({', '.join(parts)})" if parts else ""


def describe_tools(tools: list[ToolSpec]) -> tuple[str, list[str]]:
    """The catalog's shared Types section (empty when no tool names a type) and, per tool, its
    arguments and result in the compact notation (MCP tools aside: the caller fences theirs).
    An argument model that several tools share is a type too, written once."""
    table = TypeTable()
    roots: dict[int, dict[str, Any]] = {}
    own = [tool for tool in tools if tool.mcp is None]
    uses = Counter(json.dumps(tool.arguments_schema, sort_keys=True) for tool in own)
    arguments: dict[str, str] = {}
    results: dict[str, str] = {}
    for tool in own:
        schema = tool.arguments_schema
        _collect(table, roots, schema)
        shared = uses[json.dumps(schema, sort_keys=True)] > 1
        name = table.named_object(schema, roots) if shared else None
        arguments[tool.name] = f"Arguments: {name}" if name else table.arguments(schema)
        if tool.result_schema is not None:
            result = tool.result_schema
            _collect(table, roots, result)
            name = table.named_object(result, roots)
            results[tool.name] = f"\nResult: {name or table.render(result, result)}"
    described = [arguments[tool.name] + results.get(tool.name, "") for tool in own]
    return table.render_types(roots), described


def _collect(table: TypeTable, roots: dict[int, dict[str, Any]], root: dict[str, Any]) -> None:
    table.collect(root)
    for schema in (root.get("$defs") or {}).values():
        roots[id(schema)] = root
