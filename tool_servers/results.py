"""What an MCP tool call gives back, in the harness's terms: a node result, or the error code
that decides recovery (retry, replan or halt) as it does for a built-in tool."""

from __future__ import annotations

import json
from typing import Any

from mcp import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    CallToolResult,
    EmbeddedResource,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from pydantic import JsonValue

from harness.catalog.mcp_tools import McpListedTool, McpToolAnnotations
from harness.core.errors import ErrorCode

MAX_RESULT_CHARS = 200_000
"""A node result's text is cut here (with a note saying so): far below Temporal's 2 MB payload
limit, whatever a server sends back."""


def listed_tool(tool: Any) -> McpListedTool:
    """A tool of `tools/list` (the SDK's model) as the catalog mapping reads it."""
    hints = tool.annotations
    defaults = McpToolAnnotations()
    return McpListedTool(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema or {"type": "object"}),
        annotations=McpToolAnnotations(
            read_only=_hint(hints, "read_only_hint", defaults.read_only),
            destructive=_hint(hints, "destructive_hint", defaults.destructive),
            idempotent=_hint(hints, "idempotent_hint", defaults.idempotent),
            open_world=_hint(hints, "open_world_hint", defaults.open_world),
        ),
    )


def _hint(hints: Any, name: str, default: bool) -> bool:
    value = getattr(hints, name, None) if hints is not None else None
    return default if value is None else bool(value)


def node_result(result: CallToolResult, limit: int = MAX_RESULT_CHARS) -> JsonValue:
    """The structured content when the server gives it (and it fits in `limit` characters of
    JSON), else the text of the content blocks, cut at `limit`."""
    if result.structured_content is not None:
        structured: JsonValue = result.structured_content
        size = len(json.dumps(structured, separators=(",", ":"), default=str))
        if size <= limit:
            return structured
        note = f"[structured content of {size:,} characters left out; its text follows]"
        return _bounded(f"{note}\n{content_text(result)}", limit)
    return _bounded(content_text(result), limit)


def content_text(result: CallToolResult) -> str:
    """Every content block as text: a text block as is, anything else named by its kind."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(resource.text)
            else:
                parts.append(f"[resource {resource.uri}, {resource.mime_type or 'binary'}]")
        elif isinstance(block, ResourceLink):
            parts.append(f"[link {block.uri}]")
        else:
            mime = getattr(block, "mime_type", None) or "binary"
            parts.append(f"[{getattr(block, 'type', 'content')} {mime}]")
    return "\n".join(parts)


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[truncated: {limit:,} of {len(text):,} characters shown]"


def protocol_error_code(error: MCPError) -> ErrorCode:
    """The code of a JSON-RPC error the server (or the transport) answered a call with."""
    code = error.error.code
    if code == CONNECTION_CLOSED:
        return ErrorCode.TOOL_UNAVAILABLE
    if code == REQUEST_TIMEOUT:
        return ErrorCode.TIMEOUT
    if code == METHOD_NOT_FOUND or (
        code == INVALID_PARAMS and "unknown tool" in error.error.message.lower()
    ):
        return ErrorCode.UNKNOWN_TOOL
    if code == INVALID_PARAMS:
        return ErrorCode.INVALID_ARGUMENT
    return ErrorCode.TOOL_EXECUTION_FAILED
