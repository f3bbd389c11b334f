"""durable_harness: the one package a user of the harness imports.

Write a typed function, and `@tool` makes it a tool the planner can call:

    from durable_harness import ToolContext, ToolError, tool

    @tool
    async def wind_speed(station: str, ctx: ToolContext, unit: str = "m/s") -> dict[str, float]:
        '''The latest wind reading at a weather station.'''

Everything else (`harness`, `workflows`, `activities`, `scenarios`, `worker`, `starter`) is
internal. This package may import the pure domain (`harness`) and nothing else of the project;
the built-in scenarios and the activities import what a tool is at run time from it
(`durable_harness.runtime`), and the domain and the workflows never import it.
"""

from __future__ import annotations

from durable_harness.errors import ErrorCode, ToolDefinitionError, ToolError
from durable_harness.pack import Pack, PackDefinitionError
from durable_harness.runtime import ToolContext
from durable_harness.tools import FunctionTool, tool

__all__ = [
    "ErrorCode",
    "FunctionTool",
    "Pack",
    "PackDefinitionError",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "tool",
]
