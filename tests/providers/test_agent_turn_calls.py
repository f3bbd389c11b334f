"""An agent's turn through each SDK provider against its fake API: the tools and the results it
sends, the calls (several in one turn) or the answer it reads back, and the usage it prices."""

from __future__ import annotations

import pytest

from activities.llm import LLMProvider, ProviderConfigError, ProviderError
from activities.llm.pricing import PricingTable
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
from harness.core.errors import ErrorCode
from scenarios import get_scenario
from tests.fakes import FakeApi, FakeCall, FakeServer, Recorded, Reply, Responder, SentResult, Usage
from tests.providers.script import counted, expected_usage
from tests.providers.support import MODELS, PRICE, PRICING, build_provider

TOOLS = [OfferedTool.of(spec) for spec in get_scenario("cities").catalog().tools[:2]]
GOAL = UserMessage(text="How many people live in Paris and what time is it there?")
TURN_USAGE = Usage(input=900, output=80, cache_read=600)
PARIS = {"city": "Paris"}
CALLS = [
    FakeCall("call_pop", "get_population", PARIS),
    FakeCall("call_tz", "get_timezone", PARIS),
]


def turn_request(*messages: AgentMessage, **changes: object) -> AgentTurnRequest:
    request = AgentTurnRequest(
        run_id="run-1",
        node_id="paris",
        turn=len([m for m in messages if isinstance(m, AssistantMessage)]) + 1,
        system="You look up facts about cities.",
        messages=[GOAL, *messages],
        tools=TOOLS,
    )
    return request.model_copy(update=changes)


def answered_calls() -> list[AgentMessage]:
    """The model's first turn (two calls) and their results: one ok, one failed."""
    calls = [ToolCall(id=c.id, tool=c.tool, arguments=c.arguments) for c in CALLS]
    return [
        AssistantMessage(text="Looking both up.", tool_calls=calls),
        ToolResultMessage(
            call_id="call_pop", tool="get_population", ok=True, result={"population": 2_102_650}
        ),
        ToolResultMessage(call_id="call_tz", tool="get_timezone", ok=False, error="timed out"),
    ]


@pytest.fixture
def agent_provider(api: FakeApi, server: FakeServer) -> LLMProvider:
    """A provider whose agent model is priced (the support's settings name none)."""
    pricing = PricingTable({**PRICING.prices(), MODELS.planner: PRICING.prices()[MODELS.planner]})
    return build_provider(api, api.base_url(server.url), pricing=pricing)


async def test_a_turn_offers_the_tools_with_their_schemas_to_the_agent_model(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.tool_calls_reply(CALLS, TURN_USAGE))
    await agent_provider.agent_turn(turn_request())
    (request,) = server.requests
    assert api.offered_tools(request) == ["get_population", "get_timezone"]
    # with no agent model configured, the planner's model takes the turn
    assert request.body["model"] == MODELS.planner
    assert "You look up facts about cities." in api.system_text(request)
    assert GOAL.text in api.user_text(request)


@pytest.mark.parametrize("api", ["anthropic"], indirect=True)
async def test_anthropic_gets_tools_with_input_schemas_and_results_as_tool_result_blocks(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("Paris has 2,102,650 people.", TURN_USAGE))
    await agent_provider.agent_turn(turn_request(*answered_calls()))
    body = server.requests[0].body
    assert body["tools"][0] == {
        "name": TOOLS[0].name,
        "description": TOOLS[0].description,
        "input_schema": TOOLS[0].arguments_schema,
    }
    user, assistant, results = body["messages"]
    assert user["role"] == "user"
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Looking both up."},
            {"type": "tool_use", "id": "call_pop", "name": "get_population", "input": PARIS},
            {"type": "tool_use", "id": "call_tz", "name": "get_timezone", "input": PARIS},
        ],
    }
    # both results of the turn in one user message, the failed one flagged as an error
    assert results == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_pop",
                "content": '{"population": 2102650}',
                "is_error": False,
            },
            {
                "type": "tool_result",
                "tool_use_id": "call_tz",
                "content": "timed out",
                "is_error": True,
            },
        ],
    }


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_openai_gets_functions_and_results_as_tool_messages_with_their_call_ids(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("Paris has 2,102,650 people.", TURN_USAGE))
    await agent_provider.agent_turn(turn_request(*answered_calls()))
    body = server.requests[0].body
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": TOOLS[0].name,
            "description": TOOLS[0].description,
            "parameters": TOOLS[0].arguments_schema,
        },
    }
    system, user, assistant, population, timezone = body["messages"]
    assert (system["role"], user["role"]) == ("system", "user")
    assert assistant == {
        "role": "assistant",
        "content": "Looking both up.",
        "tool_calls": [
            {
                "id": "call_pop",
                "type": "function",
                "function": {"name": "get_population", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "call_tz",
                "type": "function",
                "function": {"name": "get_timezone", "arguments": '{"city": "Paris"}'},
            },
        ],
    }
    assert population == {
        "role": "tool",
        "tool_call_id": "call_pop",
        "content": '{"population": 2102650}',
    }
    assert timezone == {"role": "tool", "tool_call_id": "call_tz", "content": "ERROR: timed out"}


async def test_every_call_of_a_turn_is_read_back_with_its_id_and_arguments(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.tool_calls_reply(CALLS, TURN_USAGE, text="Looking both up."))
    reply = await agent_provider.agent_turn(turn_request())
    assert reply.stop is TurnStop.TOOL_USE and reply.answer is None
    assert [(c.id, c.tool, c.arguments) for c in reply.tool_calls] == [
        ("call_pop", "get_population", PARIS),
        ("call_tz", "get_timezone", PARIS),
    ]
    assert reply.text == "Looking both up."


async def test_the_results_sent_back_answer_the_calls_and_the_final_answer_is_read(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("Paris has 2,102,650 people; its time is unknown.", TURN_USAGE))
    reply = await agent_provider.agent_turn(turn_request(*answered_calls()))
    assert api.sent_results(server.requests[0]) == [
        SentResult("call_pop", '{"population": 2102650}', failed=False),
        SentResult("call_tz", "timed out", failed=True),
    ]
    assert reply.stop is TurnStop.ANSWERED and reply.tool_calls == []
    assert reply.answer == "Paris has 2,102,650 people; its time is unknown."


async def test_a_turns_usage_is_the_reported_tokens_priced_for_its_model(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.tool_calls_reply(CALLS, TURN_USAGE))
    reply = await agent_provider.agent_turn(turn_request())
    assert reply.model == MODELS.planner
    assert counted(reply.usage) == pytest.approx(
        counted(expected_usage(MODELS.planner, TURN_USAGE))
    )
    assert reply.usage.models == [MODELS.planner] and not reply.usage.estimated


async def test_a_runs_agent_model_answers_and_economy_falls_back_to_the_cheaper_model(
    api: FakeApi, server: FakeServer
) -> None:
    agent = "claude-run-agent" if api.name == "anthropic" else "gpt-run-agent"
    pricing = PricingTable({**PRICING.prices(), agent: PRICE})
    provider = build_provider(api, api.base_url(server.url), pricing=pricing)
    server.enqueue(api.text_reply("done", TURN_USAGE), api.text_reply("done", TURN_USAGE))
    named = await provider.agent_turn(turn_request(model=agent))
    economy = await provider.agent_turn(turn_request(model=agent, economy=True))
    assert [request.body["model"] for request in server.requests] == [agent, MODELS.worker]
    assert (named.model, economy.model) == (agent, MODELS.worker)


async def test_an_agent_model_of_another_family_or_unpriced_under_a_cost_limit_is_refused(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    # an unpriced model would count 0 against the run's cost limit, so the limit would not hold
    other = "gpt-4.1" if api.name == "anthropic" else "claude-sonnet-4-6"
    with pytest.raises(ProviderConfigError, match=f"{other}"):
        await agent_provider.agent_turn(turn_request(model=other))
    unpriced = "claude-unpriced-9" if api.name == "anthropic" else "gpt-unpriced-9"
    limited = turn_request(model=unpriced).model_copy(update={"cost_limited": True})
    with pytest.raises(ProviderConfigError, match=f"price {unpriced}: add it to .*HARNESS_PRICING"):
        await agent_provider.agent_turn(limited)
    assert server.requests == []


async def test_an_unpriced_agent_model_runs_with_its_cost_marked_unknown_without_a_cost_limit(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    unpriced = "claude-unpriced-9" if api.name == "anthropic" else "gpt-unpriced-9"
    server.enqueue(api.text_reply("done", TURN_USAGE))
    reply = await agent_provider.agent_turn(turn_request(model=unpriced))
    assert reply.usage.cost_usd == 0.0 and reply.usage.total_tokens > 0
    assert reply.usage.unpriced_models == [unpriced] and not reply.usage.cost_known


async def test_a_turn_cut_off_at_its_token_limit_is_the_text_it_had(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("Paris has", Usage(10, 4096), cut_off=True))
    reply = await agent_provider.agent_turn(turn_request())
    assert (reply.stop, reply.answer, reply.tool_calls) == (TurnStop.MAX_TOKENS, "Paris has", [])


async def test_a_turn_with_neither_a_call_nor_text_is_invalid_model_output(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("  ", TURN_USAGE))
    with pytest.raises(ProviderError) as raised:
        await agent_provider.agent_turn(turn_request())
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT


async def test_a_rate_limited_turn_is_a_provider_error_with_the_servers_retry_after(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.error_reply(429, "slow down", {"retry-after": "2"}))
    with pytest.raises(ProviderError) as raised:
        await agent_provider.agent_turn(turn_request())
    assert (raised.value.code, raised.value.retry_after) == (ErrorCode.RATE_LIMITED, 2.0)
    assert len(server.requests) == 1, "the SDK must not retry on its own"


async def test_a_turn_that_offers_no_tool_sends_no_tools_and_gets_the_answer(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("Paris has 2,102,650 people.", TURN_USAGE))
    reply = await agent_provider.agent_turn(turn_request(*answered_calls(), tools=[]))
    assert "tools" not in server.requests[0].body
    assert reply.answer == "Paris has 2,102,650 people."


def with_choice(api: FakeApi, changes: dict[str, object]) -> Responder:
    """A Chat Completions turn asking for CALLS, its first choice changed by `changes`."""

    def reply(request: Recorded) -> Reply:
        made = api.tool_calls_reply(CALLS, TURN_USAGE)(request)
        choice = {**made.body["choices"][0], **changes}
        return Reply(made.status, {**made.body, "choices": [choice]})

    return reply


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_calls_that_a_server_finishes_as_stop_are_still_run(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    server.enqueue(with_choice(api, {"finish_reason": "stop"}))
    reply = await agent_provider.agent_turn(turn_request())
    assert reply.stop is TurnStop.TOOL_USE
    assert [call.id for call in reply.tool_calls] == ["call_pop", "call_tz"]


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_call_arguments_that_are_not_a_json_object_are_invalid_model_output(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:
    message = {"role": "assistant", "content": None, "refusal": None}
    for arguments in ('{"city": "Par', '["Paris"]'):
        function = {"name": "get_population", "arguments": arguments}
        call = {"id": "call_x", "type": "function", "function": function}
        server.enqueue(with_choice(api, {"message": {**message, "tool_calls": [call]}}))
        with pytest.raises(ProviderError) as raised:
            await agent_provider.agent_turn(turn_request())
        assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
        assert "get_population" in raised.value.message


@pytest.mark.parametrize("api", ["anthropic"], indirect=True)
async def test_a_refused_turn_is_a_policy_violation(
    api: FakeApi, server: FakeServer, agent_provider: LLMProvider
) -> None:

    def refusal(request: Recorded) -> Reply:
        made = api.text_reply("I can't help with that.", TURN_USAGE)(request)
        return Reply(made.status, {**made.body, "stop_reason": "refusal"})

    server.enqueue(refusal)
    with pytest.raises(ProviderError) as raised:
        await agent_provider.agent_turn(turn_request())
    assert raised.value.code is ErrorCode.POLICY_VIOLATION
