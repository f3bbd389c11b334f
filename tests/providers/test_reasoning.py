"""Reasoning models: each role's effort from the environment, what each API is sent for it, the
room its limit leaves for reasoning, and the reasoning tokens a reply reports."""

from __future__ import annotations

import json

import pytest
from structlog.testing import capture_logs

from activities.llm import LLMProvider, ProviderConfigError, caching
from activities.llm.config import ANTHROPIC, OPENAI, ProviderSettings
from activities.llm.openai_compat import Compat
from activities.llm.reasoning import BUDGETS, Effort, Reasoning, Role, read_reasoning
from harness.catalog.llm import JudgeRequest, TextRequest
from harness.engine.messages import PlanRequest
from scenarios import get_scenario
from tests.fakes import FakeApi, FakeServer, Recorded, Usage
from tests.providers.script import PLAN_USAGE, cities_plan_json, expected_usage
from tests.providers.support import MODELS, build_provider

CITIES = get_scenario("cities")
GOAL = "Compare Paris and Tokyo"
EFFORTS = Reasoning({Role.PLANNER: Effort.HIGH, Role.WRITER: Effort.LOW, Role.JUDGE: Effort.OFF})
VERDICT = json.dumps({"passed": True, "score": 1.0, "reasons": []})


def plan_request() -> PlanRequest:
    return PlanRequest(
        run_id="run-test", goal=GOAL, scenario="cities", attempt=1, catalog=CITIES.catalog()
    )


def text_request() -> TextRequest:
    return TextRequest(
        system="You write.", prompt="Describe Paris.", draft="Paris.", max_output_tokens=200
    )


def judge_request() -> JudgeRequest:
    return JudgeRequest(goal=GOAL, report="# Paris", criteria=["every city is compared"])


def reasoning_provider(api: FakeApi, server: FakeServer, reasoning: Reasoning) -> LLMProvider:
    return build_provider(api, api.base_url(server.url), reasoning=reasoning)


def limit(api: FakeApi, request: Recorded) -> int:
    body = request.body
    return int(body["max_tokens"] if api.name == "anthropic" else body["max_completion_tokens"])


async def ask_each_role(api: FakeApi, server: FakeServer, provider: LLMProvider) -> None:
    server.enqueue(
        api.text_reply(cities_plan_json(GOAL), PLAN_USAGE),
        api.text_reply("Paris.", Usage(30, 5)),
        api.text_reply(VERDICT, Usage(300, 20)),
    )
    await provider.plan(plan_request(), CITIES)
    await provider.write(text_request())
    await provider.judge(judge_request())


def test_each_roles_effort_comes_from_its_own_variable() -> None:
    env = {
        "HARNESS_PLANNER_REASONING": "high",
        "HARNESS_WRITER_REASONING": " Low ",
        "HARNESS_JUDGE_REASONING": "off",
        "HARNESS_AGENT_REASONING": "",
    }
    reasoning = read_reasoning(env, "openai")
    assert [reasoning.effort(role) for role in Role] == [
        Effort.HIGH,
        Effort.LOW,
        Effort.OFF,
        None,
    ]


def test_a_bad_effort_is_a_one_line_error_naming_the_variable_and_the_choices() -> None:
    with pytest.raises(ProviderConfigError) as raised:
        ProviderSettings.from_env(
            OPENAI, {"OPENAI_API_KEY": "k", "HARNESS_JUDGE_REASONING": "extreme"}
        )
    message = str(raised.value)
    assert message.startswith("HARNESS_JUDGE_REASONING=extreme: expected one of off, low,")
    assert "\n" not in message


def test_an_anthropic_agent_cannot_be_set_to_think_in_its_tool_use_turns() -> None:
    env = {"ANTHROPIC_API_KEY": "k", "HARNESS_AGENT_REASONING": "medium"}
    with pytest.raises(ProviderConfigError, match="HARNESS_AGENT_REASONING=medium: the anthropic"):
        ProviderSettings.from_env(ANTHROPIC, env)
    off = ProviderSettings.from_env(ANTHROPIC, {**env, "HARNESS_AGENT_REASONING": "off"})
    assert off.reasoning.effort(Role.AGENT) is Effort.OFF


async def test_each_role_sends_its_effort_and_its_limit_makes_room_for_it(
    api: FakeApi, server: FakeServer
) -> None:
    await ask_each_role(api, server, reasoning_provider(api, server, EFFORTS))
    planned, written, judged = server.requests
    assert limit(api, planned) == 16_000 + BUDGETS[Effort.HIGH]
    assert limit(api, written) == 200 + BUDGETS[Effort.LOW]
    assert limit(api, judged) == 2_000
    if api.name == "openai":
        efforts = [request.body.get("reasoning_effort") for request in server.requests]
        assert efforts == ["high", "low", "none"]
    else:
        thinking = [request.body.get("thinking") for request in server.requests]
        assert thinking == [
            {"type": "enabled", "budget_tokens": BUDGETS[Effort.HIGH]},
            {"type": "enabled", "budget_tokens": BUDGETS[Effort.LOW]},
            None,
        ]


async def test_unset_the_request_says_nothing_of_reasoning_and_a_local_model_keeps_its_limits(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    await ask_each_role(api, server, provider)
    planned, written, judged = server.requests
    for request in server.requests:
        assert "reasoning_effort" not in request.body and "thinking" not in request.body
    # a server that is not OpenAI's own (or Claude without thinking) reasons only when asked
    assert [limit(api, request) for request in (planned, written, judged)] == [16_000, 200, 2_000]


def test_unset_the_writer_and_judge_of_a_model_that_reasons_unasked_have_room() -> None:
    unset = Reasoning({})
    assert unset.room(Role.WRITER, 200, reasons_unasked=True) == 200 + BUDGETS[Effort.MEDIUM]
    assert unset.room(Role.JUDGE, 2_000, reasons_unasked=True) == 2_000 + BUDGETS[Effort.MEDIUM]
    assert unset.room(Role.PLANNER, 16_000, reasons_unasked=True) == 16_000
    assert unset.room(Role.WRITER, 200) == 200


def test_a_model_the_sdk_wants_thinking_adaptively_gets_adaptive_thinking() -> None:
    reasoning = Reasoning({Role.WRITER: Effort.MEDIUM})
    assert reasoning.anthropic_options(Role.WRITER, "claude-opus-4-6") == {
        "thinking": {"type": "adaptive"}
    }
    assert reasoning.anthropic_options(Role.WRITER, "claude-sonnet-5-5") == {
        "thinking": {"type": "enabled", "budget_tokens": BUDGETS[Effort.MEDIUM]}
    }


async def test_reasoning_tokens_are_recorded_and_priced_as_output(
    api: FakeApi, server: FakeServer
) -> None:
    provider = reasoning_provider(api, server, EFFORTS)
    usage = Usage(input=40, output=900, reasoning=850)
    server.enqueue(api.text_reply("Paris is the capital of France.", usage))
    reply = await provider.write(text_request())
    # Anthropic's thinking block comes before the text, and is not part of it
    assert reply.text == "Paris is the capital of France."
    assert reply.usage.reasoning_tokens == 850
    assert reply.usage == expected_usage(MODELS.worker, usage)
    assert reply.usage.cost_usd == pytest.approx((40 * 1.0 + 900 * 5.0) / 1_000_000)


async def test_a_plan_carries_its_scenarios_prompt_cache_key_to_openais_own_api_only(
    api: FakeApi, server: FakeServer, provider: LLMProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    await ask_each_role(api, server, provider)  # a compatible server might refuse the key
    assert [request.body.get("prompt_cache_key") for request in server.requests] == [None] * 3
    if api.name == "openai":
        monkeypatch.setattr(Compat, "official", lambda self: True)
        await ask_each_role(api, server, provider)
        keys = [request.body.get("prompt_cache_key") for request in server.requests[3:]]
        assert keys == ["harness-plan-cities", None, None]


async def test_a_planner_prompt_under_the_cache_minimum_is_warned_of_once_per_model_and_scenario(
    api: FakeApi, server: FakeServer, provider: LLMProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(caching, "_warned", set())
    short = Usage(input=900, output=50)  # under either API's minimum of 1,024, not cached
    server.enqueue(*(api.text_reply(cities_plan_json(GOAL), short) for _ in range(2)))
    with capture_logs() as logs:
        await provider.plan(plan_request(), CITIES)
        await provider.plan(plan_request(), CITIES)
    warnings = [log for log in logs if log["event"] == "prompt_cache.under_minimum"]
    assert len(warnings) == 1
    (warning,) = warnings
    assert (warning["model"], warning["scenario"]) == (MODELS.planner, "cities")
    assert warning["prompt_tokens"] == 900 and warning["minimum"] == 1_024


async def test_a_cached_planner_prompt_is_not_warned_of(
    api: FakeApi, server: FakeServer, provider: LLMProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(caching, "_warned", set())
    cached = Usage(input=5_000, output=50, cache_read=4_000)
    server.enqueue(api.text_reply(cities_plan_json(GOAL), cached))
    with capture_logs() as logs:
        await provider.plan(plan_request(), CITIES)
    assert not [log for log in logs if log["event"] == "prompt_cache.under_minimum"]
