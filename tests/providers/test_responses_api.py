"""The OpenAI provider through the Responses API, against its fake: which models go there, what
a plan, a text, a verdict and an agent's turn send and get back, and how a response says no."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from activities.llm import ProviderConfigError, ProviderError
from activities.llm.config import OPENAI, ProviderSettings
from activities.llm.openai_provider import OpenAIProvider
from activities.llm.openai_responses import WireApi, responses_only
from activities.llm.pricing import PricingTable
from activities.llm.reasoning import (
    BUDGETS,
    NO_REASONING_SETTINGS,
    Effort,
    Reasoning,
    read_reasoning,
)
from activities.llm.structured import PLAN_SCHEMA, VERDICT_SCHEMA, PlanDraft
from harness.catalog.agent_turns import (
    AgentTurnRequest,
    AssistantMessage,
    OfferedTool,
    ToolCall,
    ToolResultMessage,
    TurnStop,
    UserMessage,
)
from harness.catalog.llm import JudgeRequest, TextRequest
from harness.core.errors import ErrorCode
from harness.engine.messages import PlanRequest
from scenarios import get_scenario
from tests.fakes import FakeCall, FakeServer, Recorded, Reply, Usage
from tests.fakes.openai_responses_api import OpenAIResponsesApi
from tests.providers.script import PLAN_USAGE, cities_plan_json, counted, expected_usage
from tests.providers.support import MODELS, PRICE, PRICING, TEST_KEY

API = OpenAIResponsesApi()
CITIES = get_scenario("cities")
GOAL = "Compare Paris and Tokyo"


def plan_request() -> PlanRequest:
    return PlanRequest(
        run_id="run-test", goal=GOAL, scenario="cities", attempt=1, catalog=CITIES.catalog()
    )


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(API.route) as fake:
        yield fake


def responses_provider(
    server: FakeServer,
    wire: WireApi = WireApi.RESPONSES,
    pricing: PricingTable = PRICING,
    reasoning: Reasoning = NO_REASONING_SETTINGS,
) -> OpenAIProvider:
    settings = ProviderSettings(
        vendor=OPENAI,
        api_key=TEST_KEY,
        models=MODELS,
        pricing=pricing,
        base_url=API.base_url(server.url),
        reasoning=reasoning,
    )
    return OpenAIProvider(settings, wire=wire)


@pytest.fixture
def provider(server: FakeServer) -> OpenAIProvider:
    return responses_provider(server)


def text_request(limit: int = 1024) -> TextRequest:
    return TextRequest(
        system="You write.", prompt="Describe Paris.", draft="Paris.", max_output_tokens=limit
    )


@pytest.mark.parametrize(
    ("model", "only"),
    [
        ("gpt-5-pro", True),
        ("o3-pro-2025-06-10", True),
        ("gpt-5.2-pro", True),
        ("gpt-5.1-codex-max", True),
        ("codex-mini-latest", True),
        ("o3-deep-research", True),
        ("computer-use-preview", True),
        ("gpt-4.1", False),
        ("gpt-5-mini", False),
        ("o3", False),
        ("google/gemini-2.5-pro", False),
        ("test-planner", False),
    ],
)
def test_responses_only_models_are_told_by_the_sdks_list_or_their_kind(
    model: str, only: bool
) -> None:
    assert responses_only(model) is only


def test_the_api_setting_is_read_and_a_wrong_one_is_refused_in_one_line() -> None:
    assert WireApi.from_env({}) is WireApi.AUTO
    assert WireApi.from_env({"HARNESS_OPENAI_API": " Responses "}) is WireApi.RESPONSES
    with pytest.raises(ProviderConfigError) as refused:
        WireApi.from_env({"HARNESS_OPENAI_API": "completions"})
    assert str(refused.value) == (
        "HARNESS_OPENAI_API='completions' is not one of auto, chat, responses; unset it for auto"
    )


async def test_in_auto_mode_a_responses_only_model_goes_to_responses_and_others_do_not(
    server: FakeServer,
) -> None:
    pricing = PricingTable({**PRICING.prices(), "gpt-5-pro": PRICE})
    provider = responses_provider(server, WireApi.AUTO, pricing)
    server.enqueue(API.text_reply("Paris.", Usage(3, 2)))
    written = await provider.write(text_request().model_copy(update={"model": "gpt-5-pro"}))
    assert written.text == "Paris." and server.requests[0].path == "/v1/responses"
    with pytest.raises(ProviderError) as raised:  # the fake serves only /v1/responses
        await provider.write(text_request())
    assert raised.value.code is ErrorCode.CONFIG_INVALID and "no route" in raised.value.message


async def test_a_plan_is_asked_with_a_strict_schema_and_charged_with_its_reasoning(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.enqueue(API.text_reply(cities_plan_json(GOAL), PLAN_USAGE, reasoning=300))
    planned = await provider.plan(plan_request(), CITIES)
    (request,) = server.requests
    assert request.body["text"]["format"] == {
        "type": "json_schema",
        "name": "plan",
        "schema": PLAN_SCHEMA,
        "strict": True,
    }
    assert request.body["store"] is False and request.body["max_output_tokens"] == 16_000
    assert "\n## get_population\n" in API.system_text(request) and GOAL in API.user_text(request)
    assert PlanDraft.of(planned.plan).model_dump_json() == cities_plan_json(GOAL)
    assert planned.planned_by == f"openai:{MODELS.planner}"
    expected = expected_usage(MODELS.planner, PLAN_USAGE).model_copy(
        update={"reasoning_tokens": 300}
    )
    assert counted(planned.usage) == pytest.approx(counted(expected))


async def test_a_plan_cut_off_is_invalid_model_output_charged_for_what_it_cost(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.enqueue(API.text_reply(cities_plan_json(GOAL)[:50], PLAN_USAGE, cut_off=True))
    with pytest.raises(ProviderError) as raised:
        await provider.plan(plan_request(), CITIES)
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert "cut off (max_output_tokens)" in raised.value.message
    assert raised.value.usage is not None and raised.value.usage.output_tokens == PLAN_USAGE.output


async def test_a_reply_that_is_not_a_plan_carries_its_usage(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.enqueue(API.text_reply("Sure! First Paris.", PLAN_USAGE))
    with pytest.raises(ProviderError) as raised:
        await provider.plan(plan_request(), CITIES)
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert raised.value.usage is not None and raised.value.usage.input_tokens == PLAN_USAGE.input


async def test_the_writer_returns_the_text_and_a_cut_one_fails_naming_its_limit(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.enqueue(API.text_reply("Paris is the capital of France.", Usage(30, 12)))
    server.enqueue(API.text_reply("Paris is", Usage(30, 200), cut_off=True, reasoning=180))
    written = await provider.write(text_request())
    assert written.text == "Paris is the capital of France." and written.model == MODELS.worker
    assert API.system_text(server.requests[0]) == "You write."
    with pytest.raises(ProviderError) as raised:
        await provider.write(text_request(limit=200))
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    sent = 200 + BUDGETS[Effort.MEDIUM]  # the tool's limit and room for reasoning unasked
    assert (
        f"cut at its limit of {sent} output tokens, 180 of them reasoning" in raised.value.message
    )
    assert raised.value.usage is not None and raised.value.usage.reasoning_tokens == 180


async def test_the_judge_returns_a_structured_verdict(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    verdict = {"passed": True, "score": 0.9, "reasons": ["both cities are compared"]}
    server.enqueue(API.text_reply(json.dumps(verdict), Usage(400, 30)))
    reply = await provider.judge(
        JudgeRequest(goal=GOAL, report="# Paris and Tokyo", criteria=["every city is compared"])
    )
    assert (reply.passed, reply.score, reply.reasons) == (True, 0.9, verdict["reasons"])
    assert API.output_schema(server.requests[0]) == VERDICT_SCHEMA


TIDE = OfferedTool(
    name="tide",
    description="High water at a port.",
    arguments_schema={"type": "object", "properties": {"port": {"type": "string"}}},
)


def turn_request(*messages: UserMessage | AssistantMessage | ToolResultMessage) -> AgentTurnRequest:
    return AgentTurnRequest(
        run_id="run-test",
        node_id="brest",
        turn=len(messages),
        system="You find tide times.",
        messages=list(messages),
        tools=[TIDE],
    )


async def test_an_agent_turn_offers_function_tools_and_returns_the_function_calls(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    calls = [FakeCall("call_1", "tide", {"port": "Brest"}), FakeCall("call_2", "tide", {})]
    server.enqueue(API.tool_calls_reply(calls, Usage(50, 20), "Looking it up."))
    reply = await provider.agent_turn(turn_request(UserMessage(text="High water at Brest?")))
    assert reply.stop is TurnStop.TOOL_USE and reply.text == "Looking it up."
    assert [(c.id, c.tool, c.arguments) for c in reply.tool_calls] == [
        ("call_1", "tide", {"port": "Brest"}),
        ("call_2", "tide", {}),
    ]
    (request,) = server.requests
    assert request.body["tools"] == [
        {
            "type": "function",
            "name": "tide",
            "description": "High water at a port.",
            "parameters": TIDE.arguments_schema,
            "strict": False,
        }
    ]
    assert request.body["instructions"] == "You find tide times."


async def test_an_agent_conversation_is_sent_as_calls_and_their_outputs(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    server.enqueue(API.text_reply("High water at Brest is at 06:12.", Usage(80, 10)))
    asked = AssistantMessage(
        text="Looking it up.",
        tool_calls=[
            ToolCall(id="call_1", tool="tide", arguments={"port": "Brest"}),
            ToolCall(id="call_2", tool="tide", arguments={"port": "Nowhere"}),
        ],
    )
    reply = await provider.agent_turn(
        turn_request(
            UserMessage(text="High water at Brest?"),
            asked,
            ToolResultMessage(call_id="call_1", tool="tide", ok=True, result={"time": "06:12"}),
            ToolResultMessage(call_id="call_2", tool="tide", ok=False, error="unknown port"),
        )
    )
    assert reply.stop is TurnStop.ANSWERED and reply.answer == "High water at Brest is at 06:12."
    assert server.requests[0].body["input"] == [
        {"role": "user", "content": "High water at Brest?"},
        {"role": "assistant", "content": "Looking it up."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "tide",
            "arguments": '{"port": "Brest"}',
        },
        {
            "type": "function_call",
            "call_id": "call_2",
            "name": "tide",
            "arguments": '{"port": "Nowhere"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": '{"time": "06:12"}'},
        {"type": "function_call_output", "call_id": "call_2", "output": "ERROR: unknown port"},
    ]


async def test_a_refusal_is_a_policy_violation_naming_the_flagged_categories(
    server: FakeServer, provider: OpenAIProvider
) -> None:
    flagged = {"violence": True, "harassment": False, "self-harm": True}
    server.enqueue(API.refusal_reply("I can't help with that.", Usage(30, 5), flagged))
    with pytest.raises(ProviderError) as raised:
        await provider.write(text_request())
    assert raised.value.code is ErrorCode.POLICY_VIOLATION
    assert raised.value.message == (
        f"{MODELS.worker} refused (category: self-harm, violence): I can't help with that."
    )
    assert raised.value.usage is not None and raised.value.usage.input_tokens == 30


@pytest.mark.parametrize(
    ("code", "expected", "said"),
    [
        ("bio_policy", ErrorCode.POLICY_VIOLATION, "refused (category: bio_policy)"),
        ("server_error", ErrorCode.PROVIDER_UNAVAILABLE, "response failed (server_error)"),
        ("rate_limit_exceeded", ErrorCode.RATE_LIMITED, "failed (rate_limit_exceeded)"),
        ("invalid_prompt", ErrorCode.REQUEST_REJECTED, "failed (invalid_prompt)"),
    ],
)
async def test_a_failed_response_is_classified_by_its_error_code(
    server: FakeServer, provider: OpenAIProvider, code: str, expected: ErrorCode, said: str
) -> None:
    server.enqueue(API.failed_reply(code, "it did not work", Usage(10, 0)))
    with pytest.raises(ProviderError) as raised:
        await provider.write(text_request())
    assert raised.value.code is expected
    assert said in raised.value.message and "it did not work" in raised.value.message


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (429, ErrorCode.RATE_LIMITED),
        (401, ErrorCode.AUTH_FAILED),
        (404, ErrorCode.CONFIG_INVALID),
    ],
)
async def test_an_http_error_is_classified_as_for_chat_completions(
    server: FakeServer, provider: OpenAIProvider, status: int, code: ErrorCode
) -> None:
    server.enqueue(API.error_reply(status, "it went wrong", {"retry-after": "2"}))
    with pytest.raises(ProviderError) as raised:
        await provider.plan(plan_request(), CITIES)
    assert raised.value.code is code
    assert raised.value.retry_after == (2.0 if status == 429 else None)
    assert len(server.requests) == 1, "the SDK must not retry on its own"


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"input_tokens": 30, "output_tokens": 12, "total_tokens": 42}, (30, 12, False)),
        (None, None),
    ],
)
async def test_a_server_that_reports_little_or_no_usage_is_still_charged(
    server: FakeServer,
    provider: OpenAIProvider,
    usage: dict[str, int] | None,
    expected: tuple[int, int, bool] | None,
) -> None:
    """Servers that speak the API (vLLM, Ollama) may leave out the details, or the usage."""

    def sparse(request: Recorded) -> Reply:
        reply = API.text_reply("Paris is lovely.", Usage(1, 1))(request)
        return Reply(reply.status, {**reply.body, "usage": usage})

    server.enqueue(sparse)
    charged = (await provider.write(text_request())).usage
    if expected is None:
        assert charged.estimated and charged.input_tokens > 0 and charged.output_tokens > 0
    else:
        assert (charged.input_tokens, charged.output_tokens, charged.estimated) == expected
        assert charged.cached_tokens == charged.reasoning_tokens == 0


async def test_a_roles_reasoning_and_a_plans_cache_key_are_sent_as_the_responses_api_takes_them(
    server: FakeServer,
) -> None:
    reasoning = read_reasoning({"HARNESS_PLANNER_REASONING": "high"}, "openai")
    provider = responses_provider(server, reasoning=reasoning)
    server.enqueue(API.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    await provider.plan(plan_request(), CITIES)
    (request,) = server.requests
    assert request.body["reasoning"] == {"effort": "high"}
    assert request.body["prompt_cache_key"] == "harness-plan-cities"
    assert request.body["max_output_tokens"] == 16_000 + BUDGETS[Effort.HIGH]
    assert "reasoning_effort" not in request.body
