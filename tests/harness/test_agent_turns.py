"""An agent's turn as a provider is asked it: one typed model per message, a conversation held to
the rules both APIs hold tool use to, and a reply that is tool calls or an answer."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from harness.catalog.agent_turns import (
    AgentMessage,
    AgentTurnReply,
    AgentTurnRequest,
    AssistantMessage,
    OfferedTool,
    ToolCall,
    ToolResultMessage,
    TurnStop,
    UserMessage,
)
from harness.core.usage import TokenUsage
from scenarios import get_scenario

POPULATION = OfferedTool(
    name="get_population",
    description="Population of a city.",
    arguments_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)
CALL = ToolCall(id="c1", tool="get_population", arguments={"city": "Paris"})


def request(*messages: AgentMessage, tools: list[OfferedTool] | None = None) -> AgentTurnRequest:
    return AgentTurnRequest(
        run_id="run-1",
        node_id="agent_1",
        turn=1,
        system="You investigate.",
        messages=list(messages),
        tools=[POPULATION] if tools is None else tools,
    )


def test_an_offered_tool_is_the_catalog_specs_name_description_and_argument_schema() -> None:
    spec = get_scenario("cities").catalog().tools[0]
    offered = OfferedTool.of(spec)
    assert (offered.name, offered.description, offered.arguments_schema) == (
        spec.name,
        spec.description,
        spec.arguments_schema,
    )


def test_each_message_round_trips_as_its_own_kind() -> None:
    messages: list[AgentMessage] = [
        UserMessage(text="Find Paris's population."),
        AssistantMessage(text="Looking.", tool_calls=[CALL]),
        ToolResultMessage(call_id="c1", tool="get_population", ok=True, result={"n": 2}),
        ToolResultMessage(call_id="c2", tool="get_population", ok=False, error="no such city"),
    ]
    adapter = TypeAdapter(list[AgentMessage])
    assert adapter.validate_json(adapter.dump_json(messages)) == messages


def test_a_tool_result_has_an_error_exactly_when_it_failed() -> None:
    with pytest.raises(ValidationError, match="error exactly when"):
        ToolResultMessage(call_id="c1", tool="t", ok=False)
    with pytest.raises(ValidationError, match="error exactly when"):
        ToolResultMessage(call_id="c1", tool="t", ok=True, error="boom")


def test_a_conversation_of_calls_each_answered_once_has_no_problems() -> None:
    answered = request(
        UserMessage(text="Go."),
        AssistantMessage(tool_calls=[CALL, CALL.model_copy(update={"id": "c2"})]),
        ToolResultMessage(call_id="c2", tool="get_population", ok=True, result=1),
        ToolResultMessage(call_id="c1", tool="get_population", ok=False, error="later"),
        UserMessage(text="And Tokyo?"),
    )
    assert answered.problems() == []


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([], "open with a user message"),
        ([AssistantMessage(text="hi"), UserMessage(text="go")], "open with a user message"),
        ([UserMessage(text="go"), AssistantMessage(tool_calls=[CALL])], "have no result"),
        (
            [
                UserMessage(text="go"),
                AssistantMessage(tool_calls=[CALL]),
                UserMessage(text="well?"),
            ],
            "have no result",
        ),
        (
            [
                UserMessage(text="go"),
                AssistantMessage(tool_calls=[CALL]),
                ToolResultMessage(call_id="c1", tool="get_population", ok=True),
                ToolResultMessage(call_id="c1", tool="get_population", ok=True),
            ],
            "already answered",
        ),
        (
            [UserMessage(text="go"), ToolResultMessage(call_id="c9", tool="t", ok=True)],
            "did not call",
        ),
        ([UserMessage(text="go"), AssistantMessage(text="done")], "ends with the assistant"),
        (
            [UserMessage(text="go"), AssistantMessage(), UserMessage(text="?")],
            "says nothing",
        ),
        (
            [UserMessage(text="go"), AssistantMessage(tool_calls=[CALL, CALL])],
            "share an id",
        ),
    ],
)
def test_a_conversation_no_api_accepts_names_its_problem(
    messages: list[AgentMessage], problem: str
) -> None:
    assert any(problem in found for found in request(*messages).problems())


def test_a_tool_offered_twice_is_a_problem() -> None:
    twice = request(UserMessage(text="go"), tools=[POPULATION, POPULATION])
    assert twice.problems() == ["a tool is offered twice"]


def reply(**fields: object) -> AgentTurnReply:
    return AgentTurnReply.model_validate({"model": "m", "usage": TokenUsage(), **fields})


def test_a_reply_is_tool_calls_or_an_answer_never_both_or_neither() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        reply(tool_calls=[CALL], answer="done", stop=TurnStop.TOOL_USE)
    with pytest.raises(ValidationError, match="exactly one"):
        reply(stop=TurnStop.ANSWERED)
    with pytest.raises(ValidationError, match="stops for tool use"):
        reply(answer="done", stop=TurnStop.TOOL_USE)


def test_a_replys_message_is_its_calls_with_their_text_or_its_answer() -> None:
    asking = reply(tool_calls=[CALL], text="Let me look.", stop=TurnStop.TOOL_USE)
    assert asking.message() == AssistantMessage(text="Let me look.", tool_calls=[CALL])
    answering = reply(answer="Paris has 2.1M people.", stop=TurnStop.ANSWERED)
    assert answering.message() == AssistantMessage(text="Paris has 2.1M people.")
