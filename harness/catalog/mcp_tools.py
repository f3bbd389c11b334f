"""MCP tools in the catalog: how a tool an MCP server lists becomes a ToolSpec that the planner,
the validator and the scheduler treat like a built-in one.

The rules, from the tool's annotations (the MCP spec's hints, with the spec's defaults when a
server gives none: not read-only, destructive, not idempotent):
- a read-only tool has no side effects, and is retried freely;
- any other tool has side effects, so it waits for approval when the run asks side effects to be
  approved (the default); a destructive one always waits;
- an idempotent tool with side effects may be retried; any other runs once.

Arguments the worker pins for a server (the repository a git server works on, say) are taken
out of the schema: the planner never sees or sets them, the worker adds them to every call.

Pure: the connection to a server lives in `tool_servers/`.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.catalog.tools import McpTarget, ToolCatalog, ToolSpec, reserved_name_reason
from harness.core.errors import ErrorCode, ToolError


class McpToolAnnotations(BaseModel):
    """The hints an MCP server gives about a tool; the defaults are the spec's."""

    model_config = ConfigDict(frozen=True)

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True


class McpListedTool(BaseModel):
    """One tool as a server lists it."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    annotations: McpToolAnnotations = McpToolAnnotations()


class McpServerListing(BaseModel):
    """What one server offers, with what the worker's configuration says of it."""

    server: str
    tools: list[McpListedTool]
    prefix: str | None = Field(
        default=None, description="Put before each tool's name in the catalog, always."
    )
    pinned: list[str] = Field(
        default_factory=list,
        description="Argument names the worker sets on every call: hidden from the planner.",
    )


class ToolNameClashError(ValueError):
    """Two tools would take the same name in one catalog, even after prefixing."""


def tool_spec(name: str, listing: McpServerListing, listed: McpListedTool) -> ToolSpec:
    """The catalog entry of one listed tool, under `name`."""
    hints = listed.annotations
    side_effects = not hints.read_only
    return ToolSpec(
        name=name,
        description=listed.description or f"{listed.name} (MCP server {listing.server})",
        arguments_schema=_without(_plain(listed.input_schema), listing.pinned),
        side_effects=side_effects,
        idempotent=side_effects and hints.idempotent,
        requires_approval=side_effects and hints.destructive,
        mcp=McpTarget(server=listing.server, tool=listed.name, writes=side_effects),
    )


def with_servers(catalog: ToolCatalog, listings: list[McpServerListing]) -> ToolCatalog:
    """The catalog with every server's tools after the built-in ones. A server's tool whose name
    is taken (by a built-in tool or an earlier server's) or reserved (the `harness_` prefix, the
    built-in `write_report` and `agent`) is named `SERVER_TOOL` instead; a clash that remains is
    an error naming both."""
    tools = list(catalog.tools)
    taken = {tool.name: "the scenario" for tool in tools}
    for listing in listings:
        for listed in listing.tools:
            name = f"{listing.prefix}{listed.name}" if listing.prefix else listed.name
            if name in taken or reserved_name_reason(name):
                name = f"{listing.server}_{listed.name}"
            if name in taken or reserved_name_reason(name):
                raise ToolNameClashError(
                    f"MCP server '{listing.server}' offers '{listed.name}', and '{name}' is "
                    f"taken by {taken.get(name, 'the harness')}: give the server a prefix"
                )
            taken[name] = f"MCP server '{listing.server}'"
            tools.append(tool_spec(name, listing, listed))
    return catalog.model_copy(update={"tools": tools})


def keep_tools(
    listings: list[McpServerListing], names: Sequence[str], servers: Collection[str], pack: str
) -> list[McpServerListing]:
    """The listings with the tools of `servers` (a pack's own) cut to `names` (the pack's
    `mcp_tools`, by the names the servers list them under); other servers' (the worker's) as
    they are. A name none of those servers lists is CONFIG_INVALID naming what they offer: the
    pack was written for other servers, or a server changed, and no plan can use the tool."""
    own = [listing for listing in listings if listing.server in servers]
    offered = {listed.name for listing in own for listed in listing.tools}
    missing = [name for name in names if name not in offered]
    if missing:
        what = "; ".join(
            f"{listing.server} offers {', '.join(sorted(t.name for t in listing.tools)) or 'none'}"
            for listing in own
        )
        raise ToolError(
            ErrorCode.CONFIG_INVALID,
            f"the pack {pack} keeps {', '.join(missing)}, which none of its MCP servers lists "
            f"({what or 'it has no servers'}); fix the tools list of the pack",
        )
    kept = set(names)
    return [
        listing.model_copy(update={"tools": [t for t in listing.tools if t.name in kept]})
        if listing.server in servers
        else listing
        for listing in listings
    ]


_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def _plain(schema: Any) -> Any:
    """The schema as the validator (workflow code, which must not crash) can read it: JSON
    Schema's boolean sub-schemas (`true`: anything, `false`: nothing) written as objects, a
    sub-schema that is neither taken as anything, a `required` that is not a list of names
    left out."""
    if not isinstance(schema, dict):
        return {"enum": []} if schema is False else {}  # `true`, or what no schema can be
    plain = dict(schema)
    required = plain.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(name, str) for name in required)
    ):
        del plain["required"]
    for key in _SUBSCHEMA_MAPS:
        if isinstance(plain.get(key), dict):
            plain[key] = {name: _plain(sub) for name, sub in plain[key].items()}
    for key in _SUBSCHEMA_LISTS:
        if isinstance(plain.get(key), list):
            plain[key] = [_plain(sub) for sub in plain[key]]
    if isinstance(plain.get("items"), (dict, bool)):
        plain["items"] = _plain(plain["items"])
    return plain


def _without(schema: dict[str, Any], pinned: list[str]) -> dict[str, Any]:
    if not pinned:
        return schema
    trimmed = copy.deepcopy(schema)
    properties = trimmed.get("properties")
    if isinstance(properties, dict):
        for name in pinned:
            properties.pop(name, None)
    required = trimmed.get("required")
    if isinstance(required, list):
        trimmed["required"] = [name for name in required if name not in pinned]
    return trimmed
