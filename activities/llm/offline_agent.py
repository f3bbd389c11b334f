"""The offline provider's agent: a deterministic tool-use loop, so agent nodes run with no keys.

Each turn it reads the conversation and
1. calls, in one turn (they run in parallel), every offered tool that is due, in the order the
   tools are offered: a tool not called yet with the arguments the user's text gives it now,
   or one whose only such call failed (a failed call is tried once more, never a third time);
2. when no tool is due, answers with one line per tool: its result, its error, or why it was
   not called (the loop's own `ask_user` and `request_approval` only when they were called).

Arguments are filled by one rule, for each property of the tool's argument schema (the user's
text is every user message, the newest first, so a session's later message names one anew):
- a line `NAME: VALUE` (or `NAME=VALUE`), or such a clause after a sentence's end (`Ask me.
  question: Which year?`), in the user's text names it (the first such):
  VALUE is taken as JSON when it parses, else as the text it is (optional arguments are filled
  by this rule only);
- else, for a required argument, the first of its `enum` values, then of its `examples`, that
  the user's text names (case-insensitive, as a whole word);
- else its `default`, else its first example, else its first enum value.
A tool with a required argument that none of these fills is not called; the answer says so.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import JsonValue

from harness.catalog.agent_turns import (
    AgentMessage,
    AgentTurnRequest,
    AssistantMessage,
    OfferedTool,
    ToolCall,
    ToolResultMessage,
    TurnStop,
    UserMessage,
)
from harness.engine.agent_loop import WAIT_TOOLS

MAX_CALLS_PER_TOOL = 2
"""A tool's first call and, when it failed, one more."""
RESULT_CHARS = 200
"""How much of each result the answer repeats."""

_NAMED = re.compile(
    r"(?:^|(?<=[.!?;] ))\s*([A-Za-z_][A-Za-z0-9_]*)\s*[:=]\s*(.+?)\s*$", re.MULTILINE
)


def next_turn(request: AgentTurnRequest) -> tuple[list[ToolCall], str | None]:
    """The calls of this turn (none: the loop is done) and, when done, the answer."""
    user_text = _user_text(request.messages)
    history = _calls_by_tool(request.messages)
    calls: list[ToolCall] = []
    turn = 1 + sum(isinstance(m, AssistantMessage) for m in request.messages)  # ids unique in
    # the whole conversation: a session's slices each count their turns from one
    for tool in request.tools:
        arguments = fill_arguments(tool, user_text)
        if arguments is None or not _due(history.get(tool.name, []), arguments):
            continue
        calls.append(ToolCall(id=f"call_t{turn}_{len(calls)}", tool=tool.name, arguments=arguments))
    if calls:
        return calls, None
    return [], _answer(request, user_text, history)


def _user_text(messages: list[AgentMessage]) -> str:
    """What the user said, newest message first: in a session's conversation a later message
    names an argument anew, and the newest naming wins."""
    return "\n".join(m.text for m in reversed(messages) if isinstance(m, UserMessage))


Outcome = tuple[dict[str, JsonValue], ToolResultMessage | None]


def _calls_by_tool(messages: list[AgentMessage]) -> dict[str, list[Outcome]]:
    """Each tool's calls so far, in order: their arguments and results (None: not answered)."""
    results = {m.call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    calls: dict[str, list[Outcome]] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                calls.setdefault(call.tool, []).append((call.arguments, results.get(call.id)))
    return calls


def _due(calls: list[Outcome], arguments: dict[str, JsonValue]) -> bool:
    """A call with these arguments was not made yet, or its only one failed."""
    outcomes = [result for made, result in calls if made == arguments]
    if not outcomes:
        return True
    last = outcomes[-1]
    return len(outcomes) < MAX_CALLS_PER_TOOL and last is not None and not last.ok


def fill_arguments(tool: OfferedTool, user_text: str) -> dict[str, JsonValue] | None:
    """The tool's arguments by the module's rule; None when a required one cannot be filled."""
    properties: dict[str, Any] = tool.arguments_schema.get("properties", {})
    required = set(tool.arguments_schema.get("required", []))
    named: dict[str, str] = {}
    for name, value in _NAMED.findall(user_text):
        named.setdefault(name, value)
    arguments: dict[str, JsonValue] = {}
    for name, schema in properties.items():
        if name in named:
            arguments[name] = _value(named[name])
        elif name in required:
            value = _matched(schema, user_text)
            if value is None:
                return None
            arguments[name] = value
    return arguments


def _value(text: str) -> JsonValue:
    try:
        value: JsonValue = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value


def _matched(schema: dict[str, Any], user_text: str) -> JsonValue:
    """A required argument's value: named in the text, else the schema's default or example."""
    enum: list[JsonValue] = list(schema.get("enum", []))
    examples: list[JsonValue] = list(schema.get("examples", []))
    for candidate in [*enum, *examples]:
        if isinstance(candidate, str) and _names(user_text, candidate):
            return candidate
    if "default" in schema and schema["default"] is not None:
        default: JsonValue = schema["default"]
        return default
    return next(iter([*examples, *enum]), None)


def _names(text: str, value: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def _answer(request: AgentTurnRequest, user_text: str, history: dict[str, list[Outcome]]) -> str:
    goal = user_text.strip().splitlines()[0] if user_text.strip() else "the goal"
    lines = [f"Findings for: {goal}"]
    for tool in request.tools:
        outcomes = history.get(tool.name, [])
        last = outcomes[-1][1] if outcomes else None
        if last is None and tool.name in WAIT_TOOLS:
            continue  # the loop's own waits, offered to every agent: not asked for here
        if last is None:
            lines.append(f"- {tool.name}: not called (a required argument has no value)")
        elif last.ok:
            lines.append(f"- {tool.name}: {_shown(last.result)}")
        else:
            lines.append(f"- {tool.name} failed after {len(outcomes)} calls: {last.error}")
    return "\n".join(lines)


def _shown(result: JsonValue) -> str:
    text = result if isinstance(result, str) else json.dumps(result, sort_keys=True)
    return text if len(text) <= RESULT_CHARS else text[: RESULT_CHARS - 1] + "…"


def stop_of(calls: list[ToolCall]) -> TurnStop:
    return TurnStop.TOOL_USE if calls else TurnStop.ANSWERED
