"""The agent-turn baseline: a minimal hand-written Temporal agent loop.

Each agent of the request runs after the one before it. One turn is one bare model-call
activity (the offline provider's own `agent_turn`, the rule the harness's agent nodes play
with `HARNESS_LLM_PROVIDER=scripted`), then one bare tool activity per call the model asked
for, all of the turn's calls at once; their results join the conversation, and the next turn
reads it. The loop ends when the model answers. No budget, no trace, no progress to a parent,
no child workflow: one workflow, one task queue, and nothing but the turns.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel, Field, JsonValue

    from activities.llm.scripted import ScriptedProvider
    from harness.catalog.agent_turns import (
        AgentMessage,
        AgentTurnReply,
        AgentTurnRequest,
        OfferedTool,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )
    from harness.engine.agent_loop import AGENT_SYSTEM

NAIVE_AGENT_WORKFLOW = "BenchNaiveAgents"
STEP_TIMEOUT = timedelta(minutes=2)


class NaiveAgentRequest(BaseModel):
    agents: int = Field(ge=1, description="Agents, one after another.")
    goal: str
    tools: list[OfferedTool]
    max_turns: int = Field(default=8, ge=1)


class NaiveAgentResult(BaseModel):
    agents: int
    turns: int
    tool_calls: int
    wall_seconds: float


class NaiveToolCall(BaseModel):
    call_id: str
    tool: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


@activity.defn(name="bench.naive_model_turn")
async def naive_model_turn(request: AgentTurnRequest) -> AgentTurnReply:
    return await ScriptedProvider().agent_turn(request)


@activity.defn(name="bench.naive_tool")
async def naive_tool(call: NaiveToolCall) -> JsonValue:
    """The synthetic `delay` tool, bare: sleep `ms`, return it and `value`."""
    ms = call.arguments.get("ms", 0)
    await asyncio.sleep((ms if isinstance(ms, int) else 0) / 1000)
    return {"ms": ms, "value": call.arguments.get("value")}


@workflow.defn(name=NAIVE_AGENT_WORKFLOW)
class NaiveAgentsWorkflow:
    @workflow.run
    async def run(self, request: NaiveAgentRequest) -> NaiveAgentResult:
        started = workflow.now()
        turns = calls = 0
        for agent in range(request.agents):
            made, called = await self._agent(request, f"agent{agent}")
            turns, calls = turns + made, calls + called
        await self._tool(ToolCall(id="final", tool="collect"))  # the plan's final node
        elapsed = (workflow.now() - started).total_seconds()
        return NaiveAgentResult(
            agents=request.agents, turns=turns, tool_calls=calls, wall_seconds=elapsed
        )

    async def _agent(self, request: NaiveAgentRequest, node_id: str) -> tuple[int, int]:
        messages: list[AgentMessage] = [UserMessage(text=request.goal)]
        calls = 0
        for turn in range(1, request.max_turns + 1):
            reply: AgentTurnReply = await workflow.execute_activity(
                naive_model_turn,
                AgentTurnRequest(
                    run_id=workflow.info().workflow_id,
                    node_id=node_id,
                    turn=turn,
                    system=AGENT_SYSTEM,
                    messages=messages,
                    tools=request.tools,
                ),
                start_to_close_timeout=STEP_TIMEOUT,
                summary=f"{node_id} turn {turn}",
            )
            messages.append(reply.message())
            if reply.answer is not None:
                return turn, calls
            results = await asyncio.gather(*(self._tool(call) for call in reply.tool_calls))
            for call, result in zip(reply.tool_calls, results, strict=True):
                messages.append(
                    ToolResultMessage(call_id=call.id, tool=call.tool, ok=True, result=result)
                )
            calls += len(reply.tool_calls)
        return request.max_turns, calls

    async def _tool(self, call: ToolCall) -> JsonValue:
        result: JsonValue = await workflow.execute_activity(
            naive_tool,
            NaiveToolCall(call_id=call.id, tool=call.tool, arguments=call.arguments),
            start_to_close_timeout=STEP_TIMEOUT,
            summary=f"{call.id} {call.tool}",
        )
        return result
