"""The offline provider's agent loop: every offered tool called in one turn, in the order offered,
with arguments by a fixed rule; a failed call tried once more; then an answer from the results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import JsonValue

from activities.llm import ProviderConfigError, ScriptedProvider
from activities.llm.offline_agent import fill_arguments
from activities.llm.scripted import FALLBACK_MODEL_NAME, MODEL_NAME
from harness.catalog.agent_turns import (
    AgentMessage,
    AgentTurnReply,
    AgentTurnRequest,
    OfferedTool,
    ToolResultMessage,
    TurnStop,
    UserMessage,
)

Tool = Callable[[dict[str, JsonValue]], JsonValue]


def offered(name: str, properties: dict[str, Any], required: list[str]) -> OfferedTool:
    schema = {"type": "object", "properties": properties, "required": required}
    return OfferedTool(name=name, description=f"The {name} tool.", arguments_schema=schema)


STRING = {"type": "string"}
METRICS = offered("query_metrics", {"service": STRING}, ["service"])
LOGS = offered("search_logs", {"service": STRING, "limit": {"type": "integer"}}, ["service"])
DEPLOYS = offered(
    "list_deploys",
    {"environment": {"type": "string", "enum": ["staging", "production"]}},
    ["environment"],
)
GOAL = "Why is checkout slow in production?\nservice: checkout"


def turn_request(
    messages: list[AgentMessage], tools: list[OfferedTool], turn: int = 1, **changes: object
) -> AgentTurnRequest:
    request = AgentTurnRequest(
        run_id="run-1",
        node_id="investigate",
        turn=turn,
        system="You investigate incidents.",
        messages=messages,
        tools=tools,
    )
    return request.model_copy(update=changes)


class Failing(Exception):
    pass


async def play(
    tools: list[OfferedTool], run: dict[str, Tool], goal: str = GOAL, max_turns: int = 8
) -> list[AgentTurnReply]:
    """The loop as the agent's workflow is to run it: each turn's calls run, their results
    (or errors) sent back, until the model answers."""
    provider = ScriptedProvider()
    messages: list[AgentMessage] = [UserMessage(text=goal)]
    replies: list[AgentTurnReply] = []
    for turn in range(1, max_turns + 1):
        request = turn_request(messages, tools, turn)
        assert request.problems() == []
        reply = await provider.agent_turn(request)
        replies.append(reply)
        messages.append(reply.message())
        if reply.answer is not None:
            return replies
        for call in reply.tool_calls:
            try:
                result = ToolResultMessage(
                    call_id=call.id, tool=call.tool, ok=True, result=run[call.tool](call.arguments)
                )
            except Failing as error:
                result = ToolResultMessage(
                    call_id=call.id, tool=call.tool, ok=False, error=str(error)
                )
            messages.append(result)
    raise AssertionError(f"no answer in {max_turns} turns")


def echo(name: str) -> Tool:
    return lambda arguments: {"tool": name, **arguments}


async def test_every_offered_tool_is_called_in_one_turn_in_the_order_offered() -> None:
    tools = [LOGS, METRICS, DEPLOYS]
    replies = await play(tools, {tool.name: echo(tool.name) for tool in tools})
    first = replies[0]
    assert first.stop is TurnStop.TOOL_USE
    assert [call.tool for call in first.tool_calls] == [
        "search_logs",
        "query_metrics",
        "list_deploys",
    ]
    assert len({call.id for call in first.tool_calls}) == 3


async def test_the_agent_answers_from_every_result_once_every_tool_was_called() -> None:
    tools = [METRICS, DEPLOYS]
    replies = await play(tools, {tool.name: echo(tool.name) for tool in tools})
    assert [reply.stop for reply in replies] == [TurnStop.TOOL_USE, TurnStop.ANSWERED]
    answer = replies[-1].answer
    assert answer is not None
    assert answer.splitlines() == [
        "Findings for: Why is checkout slow in production?",
        '- query_metrics: {"service": "checkout", "tool": "query_metrics"}',
        '- list_deploys: {"environment": "production", "tool": "list_deploys"}',
    ]


async def test_a_failed_call_is_tried_once_more_and_never_a_third_time() -> None:
    calls: list[str] = []

    def broken(arguments: dict[str, JsonValue]) -> JsonValue:
        calls.append("search_logs")
        raise Failing("the log store is down")

    replies = await play([METRICS, LOGS], {"query_metrics": echo("m"), "search_logs": broken})
    assert [[call.tool for call in reply.tool_calls] for reply in replies] == [
        ["query_metrics", "search_logs"],
        ["search_logs"],
        [],
    ]
    assert calls == ["search_logs", "search_logs"]
    answer = replies[-1].answer or ""
    assert "- search_logs failed after 2 calls: the log store is down" in answer


async def test_a_tool_that_fails_once_and_then_works_is_answered_from_its_result() -> None:
    calls = 0

    def flaky(arguments: dict[str, JsonValue]) -> JsonValue:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise Failing("flaky")
        return {"lines": 3}

    replies = await play([LOGS], {"search_logs": flaky})
    assert len(replies) == 3
    assert '- search_logs: {"lines": 3}' in (replies[-1].answer or "")


def test_a_named_line_fills_any_argument_and_is_read_as_json_when_it_parses() -> None:
    text = "Look at checkout.\nservice: checkout\nlimit = 20\nservice: payments"
    assert fill_arguments(LOGS, text) == {"service": "checkout", "limit": 20}


def test_a_required_argument_takes_the_enum_value_or_example_the_text_names() -> None:
    region = offered(
        "region_status",
        {"region": {"type": "string", "examples": ["eu-west-1", "us-east-1"]}},
        ["region"],
    )
    assert fill_arguments(DEPLOYS, "What changed in PRODUCTION today?") == {
        "environment": "production"
    }
    assert fill_arguments(region, "errors in us-east-1 since noon") == {"region": "us-east-1"}
    # a whole word only: "production" inside "preproduction" names nothing
    assert fill_arguments(DEPLOYS, "preproduction is fine") == {"environment": "staging"}


def test_a_required_argument_the_text_does_not_name_takes_the_default_then_an_example() -> None:
    window = offered("window", {"minutes": {"type": "integer", "default": 15}}, ["minutes"])
    region = offered(
        "region", {"region": {"type": "string", "examples": ["eu-west-1"]}}, ["region"]
    )
    assert fill_arguments(window, "anything") == {"minutes": 15}
    assert fill_arguments(region, "anything") == {"region": "eu-west-1"}


async def test_a_tool_missing_a_required_argument_is_not_called_and_the_answer_says_so() -> None:
    replies = await play([METRICS, DEPLOYS], {"list_deploys": echo("d")}, goal="staging deploys?")
    assert [call.tool for call in replies[0].tool_calls] == ["list_deploys"]
    assert "- query_metrics: not called (a required argument has no value)" in (
        replies[-1].answer or ""
    )


async def test_with_no_tool_it_can_call_the_agent_answers_at_once() -> None:
    (reply,) = await play([METRICS], {}, goal="no service named here")
    assert reply.stop is TurnStop.ANSWERED and reply.tool_calls == []


async def test_the_same_conversation_gets_the_same_turn() -> None:
    provider = ScriptedProvider()
    request = turn_request([UserMessage(text=GOAL)], [METRICS, LOGS, DEPLOYS])
    assert await provider.agent_turn(request) == await provider.agent_turn(request)


async def test_a_turn_is_labelled_with_the_agent_model_and_estimated_usage() -> None:
    provider = ScriptedProvider()
    messages: list[AgentMessage] = [UserMessage(text=GOAL)]
    plain = await provider.agent_turn(turn_request(messages, [METRICS]))
    economy = await provider.agent_turn(turn_request(messages, [METRICS], economy=True))
    named = await provider.agent_turn(turn_request(messages, [METRICS], model="scripted-agent"))
    assert (plain.model, economy.model, named.model) == (
        MODEL_NAME,
        FALLBACK_MODEL_NAME,
        "scripted-agent",
    )
    assert plain.usage.estimated and plain.usage.models == [MODEL_NAME]
    assert plain.usage.input_tokens > 0 and plain.usage.output_tokens > 0


async def test_the_offline_provider_refuses_an_agent_model_outside_its_family() -> None:
    request = turn_request([UserMessage(text=GOAL)], [METRICS], model="gpt-4.1")
    with pytest.raises(ProviderConfigError, match=r"serves scripted-\* models, not gpt-4\.1"):
        await ScriptedProvider().agent_turn(request)


async def _next(messages: list[AgentMessage], tools: list[OfferedTool]) -> AgentTurnReply:
    return await ScriptedProvider().agent_turn(turn_request(messages, tools))


async def test_in_a_conversation_of_several_messages_the_newest_naming_of_an_argument_wins() -> (
    None
):
    first: list[AgentMessage] = [UserMessage(text=GOAL)]
    made = (await _next(first, [METRICS])).message()
    done = ToolResultMessage(call_id=made.tool_calls[0].id, tool="query_metrics", ok=True, result=1)
    later: list[AgentMessage] = [
        *first,
        made,
        done,
        UserMessage(text="And the cart? service: cart"),
    ]
    again = await _next(later, [METRICS])
    assert [call.arguments for call in again.tool_calls] == [{"service": "cart"}]
    assert again.tool_calls[0].id != made.tool_calls[0].id  # ids unique in the conversation


async def test_a_call_made_with_the_same_arguments_is_not_made_again_for_a_new_message() -> None:
    first: list[AgentMessage] = [UserMessage(text=GOAL)]
    made = (await _next(first, [METRICS])).message()
    done = ToolResultMessage(call_id=made.tool_calls[0].id, tool="query_metrics", ok=True, result=1)
    reply = await _next([*first, made, done, UserMessage(text="What did you find?")], [METRICS])
    assert reply.tool_calls == []
    assert reply.answer is not None and reply.answer.startswith("Findings for: What did you find?")
    assert "- query_metrics: 1" in reply.answer


def test_a_named_clause_after_a_sentence_fills_an_argument_as_a_line_does() -> None:
    assert fill_arguments(METRICS, "Look into it. service: checkout") == {"service": "checkout"}
    assert fill_arguments(METRICS, "Look into it.service: checkout") is None  # not a clause
