"""An agent's turn in each API's wire format: the conversation and the offered tools going out,
the model's calls or answer coming back.

Anthropic (Messages API): tools as `{name, description, input_schema}`; the assistant's calls
are `tool_use` blocks and their results `tool_result` blocks (`is_error` when the call failed)
in the next user message, all results of a turn in one message.
OpenAI (Chat Completions): tools as `{type: function, function: {name, description,
parameters}}`; the assistant's calls are its `tool_calls` (arguments as JSON text) and each
result is a `role: tool` message with the call's `tool_call_id`. The API has no error flag, so
a failed call's message opens with `ERROR: `.
"""

from __future__ import annotations

import json
from typing import Literal

from anthropic.types import (
    AssistantMessageParam,
    ContentBlockParam,
    MessageParam,
    ToolParam,
    ToolUseBlockParam,
    UserMessageParam,
)
from openai.types.chat import (
    ChatCompletionMessageParam,
    ChatCompletionMessageToolCallParam,
    ChatCompletionToolParam,
)
from pydantic import JsonValue

from activities.llm.base import ProviderError
from harness.catalog.agent_turns import (
    AgentMessage,
    AgentTurnReply,
    AssistantMessage,
    OfferedTool,
    ToolCall,
    ToolResultMessage,
    TurnStop,
    UserMessage,
)
from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage

FAILED_PREFIX = "ERROR: "

Role = Literal["user", "assistant"]


def result_text(message: ToolResultMessage) -> str:
    """What the model reads of a result: its JSON (a string as itself), or the error."""
    if not message.ok:
        return message.error or "the call failed"
    result = message.result
    return result if isinstance(result, str) else json.dumps(result, sort_keys=True)


def anthropic_tools(tools: list[OfferedTool]) -> list[ToolParam]:
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.arguments_schema}
        for tool in tools
    ]


def anthropic_messages(messages: list[AgentMessage]) -> list[MessageParam]:
    """The conversation as Messages API turns; consecutive messages of one role (a turn's
    results, then the user's text) share one turn, as the API wants them."""
    turns: list[tuple[Role, list[ContentBlockParam]]] = []
    for message in messages:
        role, blocks = _anthropic_blocks(message)
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    return [
        UserMessageParam(role="user", content=blocks)
        if role == "user"
        else AssistantMessageParam(role="assistant", content=blocks)
        for role, blocks in turns
    ]


def _anthropic_blocks(message: AgentMessage) -> tuple[Role, list[ContentBlockParam]]:
    if isinstance(message, UserMessage):
        return "user", [{"type": "text", "text": message.text}]
    if isinstance(message, ToolResultMessage):
        return "user", [
            {
                "type": "tool_result",
                "tool_use_id": message.call_id,
                "content": result_text(message),
                "is_error": not message.ok,
            }
        ]
    blocks: list[ContentBlockParam] = []
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    blocks.extend(
        ToolUseBlockParam(type="tool_use", id=call.id, name=call.tool, input=dict(call.arguments))
        for call in message.tool_calls
    )
    return "assistant", blocks


def openai_tools(tools: list[OfferedTool]) -> list[ChatCompletionToolParam]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.arguments_schema,
            },
        }
        for tool in tools
    ]


def openai_messages(system: str, messages: list[AgentMessage]) -> list[ChatCompletionMessageParam]:
    sent: list[ChatCompletionMessageParam] = [{"role": "system", "content": system}]
    for message in messages:
        if isinstance(message, UserMessage):
            sent.append({"role": "user", "content": message.text})
        elif isinstance(message, ToolResultMessage):
            content = result_text(message)
            sent.append(
                {
                    "role": "tool",
                    "tool_call_id": message.call_id,
                    "content": content if message.ok else FAILED_PREFIX + content,
                }
            )
        else:
            sent.append(_openai_assistant(message))
    return sent


def _openai_assistant(message: AssistantMessage) -> ChatCompletionMessageParam:
    calls: list[ChatCompletionMessageToolCallParam] = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.tool, "arguments": json.dumps(call.arguments)},
        }
        for call in message.tool_calls
    ]
    if calls:
        return {"role": "assistant", "content": message.text or None, "tool_calls": calls}
    return {"role": "assistant", "content": message.text}


def turn_reply(
    text: str, calls: list[ToolCall], *, cut_off: bool, model: str, usage: TokenUsage
) -> AgentTurnReply:
    """The turn from what the model said. Cut off at its token limit, it is the text it had
    (a call it was writing may be incomplete, so none is run); else its calls, if any; else its
    answer. A turn with neither is INVALID_MODEL_OUTPUT."""
    if cut_off:
        if not text.strip():
            raise ProviderError(
                ErrorCode.INVALID_MODEL_OUTPUT,
                f"{model}'s turn was cut off at its token limit before it said anything",
                usage=usage,
            )
        return AgentTurnReply(answer=text, stop=TurnStop.MAX_TOKENS, model=model, usage=usage)
    if calls:
        return AgentTurnReply(
            tool_calls=calls, text=text, stop=TurnStop.TOOL_USE, model=model, usage=usage
        )
    if not text.strip():
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT,
            f"{model} replied with neither a tool call nor text",
            usage=usage,
        )
    return AgentTurnReply(answer=text, stop=TurnStop.ANSWERED, model=model, usage=usage)


def call_arguments(tool: str, text: str | None) -> dict[str, JsonValue]:
    """An OpenAI call's arguments (Chat Completions' and the Responses API's alike): JSON text
    that must spell an object."""
    try:
        arguments = json.loads(text or "{}")
    except json.JSONDecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT,
            f"the arguments of a call to {tool} are not a JSON object: {text!r:.120}",
        )
    return arguments
