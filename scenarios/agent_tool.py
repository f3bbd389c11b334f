"""The built-in `agent` tool every pack's catalog has: a plan node that calls it runs a bounded
tool-use loop (`harness.engine.agent_node`) as a child workflow of the run. The run's workflow
starts that loop itself; the tool activity never runs it, and says so if it is ever asked."""

from __future__ import annotations

from pydantic import JsonValue

from harness.core.errors import ErrorCode, ToolError
from harness.engine.agent_node import AgentArguments, agent_tool_spec
from scenarios.base import Tool, ToolContext


async def _not_an_activity(args: AgentArguments, ctx: ToolContext) -> JsonValue:
    raise ToolError(
        ErrorCode.INVALID_ARGUMENT,
        "an agent node runs as the run's child workflow, not as a tool call",
    )


AGENT_TOOL = Tool(agent_tool_spec(), AgentArguments, _not_an_activity)
