"""What a tool is at run time: the `Tool` a catalog holds (its spec, its argument model, the
function that runs it and, for a side effect, the probe that asks what became of a call), and
the `ToolContext` each call gets besides its arguments.

The tool activity builds the context and calls `Tool.call`; `@tool` builds the `Tool` from a
typed function; a built-in scenario writes its `Tool`s by hand. Imports the domain only.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, JsonValue

from harness.catalog.llm import TextReply, TextRequest, TextWriter
from harness.catalog.tools import ToolSpec
from harness.core.usage import TokenUsage
from harness.engine.messages import OperationProbe
from harness.governance.work import TaskBinding

__all__ = ["ProbeFunction", "Tool", "ToolContext", "ToolFunction"]


@dataclass
class ToolContext:
    """What a running tool may use besides its arguments. Usage of LLM calls is summed here."""

    run_id: str
    node_id: str
    attempt: int
    writer: TextWriter
    usage: TokenUsage = field(default_factory=TokenUsage)
    services: Mapping[str, object] = field(default_factory=dict)
    task: TaskBinding | None = None
    """The task the run works on (the management tools write to it)."""
    plan_attempt: int = 0
    economy: bool = False
    """Under budget pressure: what the tool writes, the provider's fallback model writes."""
    model: str | None = None
    """The run's worker model, when the run names one."""
    cost_limited: bool = False
    """The run has a cost limit: a model no price table lists is refused."""

    async def write(self, request: TextRequest) -> TextReply:
        if self.economy:
            request = request.model_copy(update={"economy": True})
        if self.model and not request.model:
            request = request.model_copy(update={"model": self.model})
        if self.cost_limited:
            request = request.model_copy(update={"cost_limited": True})
        reply = await self.writer.write(request)
        self.usage = self.usage.plus(reply.usage)
        return reply


ToolFunction = Callable[[Any, ToolContext], Awaitable[JsonValue] | JsonValue]
"""A tool: `async def` for I/O; a plain function runs in a thread, off the worker's event loop."""

ProbeFunction = Callable[[str | None, ToolContext], Awaitable[OperationProbe]]
"""Asks the system a side-effecting tool acts on what became of the call of this run and node
(and of this operation id, when the run knows it)."""


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    arguments: type[BaseModel]
    run: ToolFunction
    probe: ProbeFunction | None = None

    async def call(self, arguments: BaseModel, context: ToolContext) -> JsonValue:
        """Run the tool: an `async def` on the event loop; a plain function in a thread, so slow
        synchronous work never holds up the worker's other activities and workflows."""
        if inspect.iscoroutinefunction(self.run):
            result: JsonValue = await self.run(arguments, context)
            return result
        done = await asyncio.to_thread(self.run, arguments, context)
        return await done if inspect.isawaitable(done) else done
