"""The pydantic-ai runtime's offline model (`HARNESS_PYDANTIC_AI_MODEL` unset or `offline`,
worker.pydantic_ai): a pydantic-ai `FunctionModel` that answers as the harness's offline
provider does (activities.llm.offline_agent: it calls each offered tool once, with arguments
from the goal's `name: value` lines, then answers with what they returned), so the runtime runs
with no key and no network, in tests and demos.

Only the worker imports this module, and only when pydantic-ai is installed.
"""

from __future__ import annotations

from pydantic_ai.messages import (
    BaseToolReturnPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from activities.llm.offline_agent import next_turn
from harness.catalog.agent_turns import (
    AgentMessage,
    AgentTurnRequest,
    AssistantMessage,
    OfferedTool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

OFFLINE_MODEL_NAME = "harness-offline"


def offline_model() -> FunctionModel:
    """The harness's offline agent as a pydantic-ai model."""
    return FunctionModel(_offline_turn, model_name=OFFLINE_MODEL_NAME)


def _offline_turn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    conversation = harness_messages(messages)
    tools = [
        OfferedTool(
            name=t.name, description=t.description or "", arguments_schema=t.parameters_json_schema
        )
        for t in info.function_tools
    ]
    turn = 1 + sum(isinstance(m, ModelResponse) for m in messages)
    request = AgentTurnRequest(
        run_id="pydantic-ai",
        node_id="agent",
        turn=turn,
        system="",
        messages=conversation,
        tools=tools,
    )
    calls, answer = next_turn(request)
    if calls:
        return ModelResponse(
            parts=[ToolCallPart(c.tool, dict(c.arguments), tool_call_id=c.id) for c in calls]
        )
    return ModelResponse(parts=[TextPart(answer or "")])


def harness_messages(messages: list[ModelMessage]) -> list[AgentMessage]:
    """pydantic-ai's history as the harness's conversation: prompts, calls and their results."""
    conversation: list[AgentMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            calls = [
                ToolCall(id=p.tool_call_id, tool=p.tool_name, arguments=p.args_as_dict())
                for p in message.parts
                if isinstance(p, ToolCallPart)
            ]
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            conversation.append(AssistantMessage(text=text, tool_calls=calls))
            continue
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                conversation.append(UserMessage(text=part.content))
            elif isinstance(part, BaseToolReturnPart):
                ok = part.outcome == "success"
                conversation.append(
                    ToolResultMessage(
                        call_id=part.tool_call_id,
                        tool=part.tool_name,
                        ok=ok,
                        result=part.content if ok else None,
                        error=None if ok else str(part.content),
                    )
                )
            elif isinstance(part, RetryPromptPart) and part.tool_name:
                conversation.append(
                    ToolResultMessage(
                        call_id=part.tool_call_id,
                        tool=part.tool_name,
                        ok=False,
                        error=str(part.content),
                    )
                )
    return conversation
