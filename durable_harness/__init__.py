"""durable_harness: the one package a user of the harness imports.

Write a typed function, and `@tool` makes it a tool the planner can call:

    from durable_harness import ToolContext, ToolError, tool

    @tool
    async def wind_speed(station: str, ctx: ToolContext, unit: str = "m/s") -> dict[str, float]:
        '''The latest wind reading at a weather station.'''

Everything else (`harness`, `workflows`, `activities`, `scenarios`, `worker`, `starter`) is
internal. This package may import the harness's own packages (the domain in `harness`, and
`scenarios.base`, where a catalog's `Tool` and the `ToolContext` are defined); the pure domain
and the workflows never import it.
"""

from __future__ import annotations

from durable_harness.errors import ErrorCode, ToolDefinitionError, ToolError
from durable_harness.tools import FunctionTool, tool
from scenarios.base import ToolContext

__all__ = [
    "ErrorCode",
    "FunctionTool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "tool",
]
