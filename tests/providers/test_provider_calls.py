"""Each provider against its fake API: what it sends, what it makes of the reply, how it fails."""

from __future__ import annotations

import dataclasses
import json
import socket

import pytest

from activities.llm import LLMProvider, ProviderConfigError, ProviderError
from activities.llm.pricing import PricingTable
from activities.llm.prompts import planner_catalog
from activities.llm.structured import PLAN_SCHEMA, VERDICT_SCHEMA, PlanDraft
from harness.catalog.llm import JudgeRequest, TextRequest
from harness.core.errors import ErrorCode, FailureContext
from harness.engine.messages import PlanRequest
from scenarios import get_scenario
from tests.fakes import FakeApi, FakeServer, Recorded, Usage
from tests.fakes.server import Reply
from tests.providers.script import PLAN_USAGE, cities_plan_json, counted, expected_usage
from tests.providers.support import MODELS, PRICE, PRICING, TEST_KEY, build_provider

CITIES = get_scenario("cities")
GOAL = "Compare Paris and Tokyo"


def plan_request(goal: str = GOAL, **changes: object) -> PlanRequest:
    request = PlanRequest(
        run_id="run-test", goal=goal, scenario="cities", attempt=1, catalog=CITIES.catalog()
    )
    return request.model_copy(update=changes)


def text_request() -> TextRequest:
    return TextRequest(system="You write.", prompt="Describe Paris.", draft="Paris.")


async def test_the_planner_request_carries_the_catalog_and_the_plan_schema(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    await provider.plan(plan_request(), CITIES)
    (request,) = server.requests
    assert request.body["model"] == MODELS.planner
    assert api.output_schema(request) == PLAN_SCHEMA
    system = api.system_text(request)
    for tool in planner_catalog(plan_request()).tools:
        assert f"## {tool.name}" in system
        assert tool.description in system
        for argument, schema in tool.arguments_schema["properties"].items():
            assert f"{argument}:" in system or f"{argument}?:" in system
            if "description" in schema:
                assert schema["description"] in system
    assert "Exactly one node calls a FINAL_SYNTHESIS tool" in system
    assert "a node that MUST be in deps" in system
    assert "An array argument may be bound several times" in system
    assert GOAL in api.user_text(request)


async def test_a_packs_instructions_reach_the_planner_after_the_catalog(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    guided = dataclasses.replace(CITIES, instructions="Look up every city's timezone first.")
    server.enqueue(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    server.enqueue(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    await provider.plan(plan_request(), guided)
    await provider.plan(plan_request(), CITIES)
    with_guidance, without = (api.system_text(request) for request in server.requests)
    assert with_guidance == (
        f"{without}\n\nGuidance for planning in cities:\nLook up every city's timezone first."
    )


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_the_openai_plan_schema_is_sent_as_strict_structured_output(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    await provider.plan(plan_request(), CITIES)
    response_format = server.requests[0].body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True


@pytest.mark.parametrize("api", ["anthropic"], indirect=True)
async def test_the_anthropic_system_prompt_is_the_cached_prefix(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    await provider.plan(plan_request(), CITIES)
    (block,) = server.requests[0].body["system"]
    assert block["cache_control"] == {"type": "ephemeral"}


async def test_the_system_prompt_is_the_same_for_every_goal_so_it_can_be_cached(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    goals = ("Compare Lima and Oslo", "Compare Berlin and Madrid")
    server.enqueue(*(api.text_reply(cities_plan_json(goal), PLAN_USAGE) for goal in goals))
    for goal in goals:
        await provider.plan(plan_request(goal), CITIES)
    first, second = (api.system_text(request) for request in server.requests)
    assert first == second
    assert all(goal not in first for goal in goals)


async def test_a_replan_prompt_carries_the_failures_and_the_previous_plan(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    previous = PlanDraft.model_validate_json(cities_plan_json(GOAL)).plan()
    failure = FailureContext(
        node_id="pop_tokyo",
        tool="get_population",
        arguments={"city": "Tokyo"},
        code=ErrorCode.MISSING_INFO.value,
        message="no data for a city called 'Tokyo'",
    )
    server.enqueue(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    await provider.plan(plan_request(attempt=2, failures=[failure], previous_plan=previous), CITIES)
    prompt = api.user_text(server.requests[0])
    assert "attempt 2" in prompt
    assert (
        '- MISSING_INFO at node pop_tokyo get_population {"city": "Tokyo"}: '
        "no data for a city called 'Tokyo'" in prompt
    )
    assert PlanDraft.of(previous).model_dump_json() in prompt


async def test_a_plan_is_returned_with_its_model_and_the_priced_reported_usage(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    response = await provider.plan(plan_request(), CITIES)
    assert response.plan == PlanDraft.model_validate_json(cities_plan_json(GOAL)).plan()
    assert response.planned_by == f"{api.name}:{MODELS.planner}"
    assert counted(response.usage) == pytest.approx(
        counted(expected_usage(MODELS.planner, PLAN_USAGE))
    )
    assert response.usage.estimated is False


async def test_the_writer_returns_the_models_text_and_its_priced_usage(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    usage = Usage(input=30, output=12, cache_read=10)
    server.enqueue(api.text_reply("Paris is the capital of France.", usage))
    reply = await provider.write(text_request())
    assert reply.text == "Paris is the capital of France."
    assert reply.model == MODELS.worker
    assert counted(reply.usage) == pytest.approx(counted(expected_usage(MODELS.worker, usage)))
    assert "Describe Paris." in api.user_text(server.requests[0])
    assert "You write." in api.system_text(server.requests[0])


async def test_a_writer_reply_cut_off_at_its_token_limit_fails_naming_the_limit_and_its_cost(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("Paris is the capital", Usage(5, 1024), cut_off=True))
    with pytest.raises(ProviderError) as raised:
        await provider.write(text_request())
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert "cut at its limit of 1024 output tokens" in raised.value.message
    assert "max_output_tokens" in raised.value.message
    assert raised.value.usage is not None and raised.value.usage.output_tokens == 1024


async def test_a_plan_cut_off_at_its_token_limit_is_invalid_model_output(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply(cities_plan_json(GOAL)[:50], PLAN_USAGE, cut_off=True))
    with pytest.raises(ProviderError) as raised:
        await provider.plan(plan_request(), CITIES)
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert "cut off" in raised.value.message


async def test_the_judge_returns_a_structured_verdict(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    verdict = {"passed": False, "score": 0.5, "reasons": ["Tokyo's timezone is missing"]}
    server.enqueue(api.text_reply(json.dumps(verdict), Usage(400, 30)))
    reply = await provider.judge(
        JudgeRequest(
            goal=GOAL,
            report="# Paris\nParis has 2,100,000 people.",
            criteria=["every city is compared"],
            evidence_terms=["2,100,000"],
        )
    )
    assert (reply.passed, reply.score, reply.reasons) == (False, 0.5, verdict["reasons"])
    assert reply.model == MODELS.judge
    (request,) = server.requests
    assert api.output_schema(request) == VERDICT_SCHEMA
    prompt = api.user_text(request)
    assert "every city is compared" in prompt and '"2,100,000"' in prompt
    assert "Paris has 2,100,000 people." in prompt


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (429, ErrorCode.RATE_LIMITED),
        (529, ErrorCode.PROVIDER_UNAVAILABLE),
        (500, ErrorCode.PROVIDER_UNAVAILABLE),
        (400, ErrorCode.REQUEST_REJECTED),
        (422, ErrorCode.REQUEST_REJECTED),
        (401, ErrorCode.AUTH_FAILED),
        (403, ErrorCode.AUTH_FAILED),
        (404, ErrorCode.CONFIG_INVALID),
    ],
)
async def test_an_http_error_from_the_sdk_becomes_a_provider_error_with_its_code(
    api: FakeApi, server: FakeServer, provider: LLMProvider, status: int, code: ErrorCode
) -> None:
    server.enqueue(api.error_reply(status, "it went wrong"))
    with pytest.raises(ProviderError) as raised:
        await provider.write(text_request())
    assert raised.value.code is code
    assert len(server.requests) == 1, "the SDK must not retry on its own"


async def test_a_rate_limit_passes_on_the_servers_retry_after(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.error_reply(429, "slow down", {"retry-after": "3"}))
    with pytest.raises(ProviderError) as raised:
        await provider.write(text_request())
    assert raised.value.retry_after == 3.0


async def test_a_rejected_key_names_the_variable_and_never_the_key(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.error_reply(401, f"Incorrect API key provided: {TEST_KEY}"))
    with pytest.raises(ProviderError) as raised:
        await provider.plan(plan_request(), CITIES)
    variable = "ANTHROPIC_API_KEY" if api.name == "anthropic" else "OPENAI_API_KEY"
    assert raised.value.message.startswith(f"{variable} was rejected (401)")
    assert TEST_KEY not in raised.value.message
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


async def test_the_key_is_sent_to_the_server(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("ok", Usage(1, 1)))
    await provider.write(text_request())
    headers = server.requests[0].headers
    assert TEST_KEY in (headers.get("x-api-key", "") + headers.get("authorization", ""))


async def test_a_server_that_cannot_be_reached_is_a_retryable_timeout(api: FakeApi) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = build_provider(api, api.base_url(f"http://127.0.0.1:{port}"))
    with pytest.raises(ProviderError) as raised:
        await provider.write(text_request())
    assert raised.value.code is ErrorCode.TIMEOUT
    assert f"127.0.0.1:{port}" in raised.value.message


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_a_server_that_reports_no_usage_gets_estimated_token_counts(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:

    def without_usage(request: Recorded) -> Reply:
        reply = api.text_reply("Paris is lovely.", Usage(1, 1))(request)
        return Reply(reply.status, {**reply.body, "usage": None})

    server.enqueue(without_usage)
    reply = await provider.write(text_request())
    assert reply.usage.estimated is True
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0


async def test_a_runs_own_models_are_asked_for_by_role_and_named_in_the_usage(
    api: FakeApi, server: FakeServer
) -> None:
    family = "claude-" if api.name == "anthropic" else "gpt-"
    run_models = {role: f"{family}run-{role}" for role in ("planner", "worker", "judge")}
    pricing = PricingTable({**PRICING.prices(), **{m: PRICE for m in run_models.values()}})
    provider = build_provider(api, api.base_url(server.url), pricing=pricing)
    server.enqueue(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    server.enqueue(api.text_reply("Paris.", Usage(input=3, output=2)))
    planned = await provider.plan(plan_request(model=run_models["planner"]), CITIES)
    written = await provider.write(
        text_request().model_copy(update={"model": run_models["worker"]})
    )
    asked = [request.body["model"] for request in server.requests]
    assert asked == [run_models["planner"], run_models["worker"]]
    assert planned.usage.models == [run_models["planner"]]
    assert written.model == run_models["worker"] and written.usage.models == [run_models["worker"]]


async def test_a_run_model_of_another_family_or_unpriced_under_a_cost_limit_is_refused(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    other = "gpt-4.1" if api.name == "anthropic" else "claude-sonnet-4-6"
    with pytest.raises(ProviderConfigError, match=f"{other}"):
        await provider.plan(plan_request(model=other), CITIES)
    unpriced = "claude-unpriced-9" if api.name == "anthropic" else "gpt-unpriced-9"
    limited = {"model": unpriced, "cost_limited": True}
    refused = "the run has a cost limit and .* does not price .*HARNESS_PRICING_FILE"
    with pytest.raises(ProviderConfigError, match=refused):
        await provider.write(text_request().model_copy(update=limited))
    with pytest.raises(ProviderConfigError, match=refused):
        await provider.plan(plan_request(model=unpriced, cost_limited=True), CITIES)
    judging = JudgeRequest(goal=GOAL, report="r", criteria=[], model=unpriced, cost_limited=True)
    with pytest.raises(ProviderConfigError, match=refused):
        await provider.judge(judging)
    assert server.requests == []


async def test_an_unpriced_run_model_writes_with_its_cost_marked_unknown_without_a_cost_limit(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    unpriced = "claude-unpriced-9" if api.name == "anthropic" else "gpt-unpriced-9"
    server.enqueue(api.text_reply("Paris.", Usage(input=30, output=2)))
    written = await provider.write(text_request().model_copy(update={"model": unpriced}))
    assert written.text == "Paris." and written.usage.total_tokens == 32
    assert written.usage.cost_usd == 0.0 and written.usage.unpriced_models == [unpriced]
