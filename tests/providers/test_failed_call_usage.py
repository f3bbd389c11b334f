"""What a failed model call cost, on the failure each provider raises: the server's usage when
it reported one, else an estimate from the request's characters (marked estimated)."""

from __future__ import annotations

import dataclasses
import time

import pytest

from activities.llm import LLMProvider, ProviderConfigError, ProviderError
from activities.llm.anthropic_provider import AnthropicProvider
from activities.llm.charging import spent_by
from activities.llm.config import (
    PLAN_MAX_TOKENS,
    VERDICT_MAX_TOKENS,
    RoleTimeouts,
    role_timeouts,
)
from activities.llm.openai_provider import OpenAIProvider
from activities.llm.structured import ModelCannotPlanError
from harness.catalog.llm import JudgeRequest
from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage, estimate_tokens
from scenarios.base import PlanningError
from tests.fakes import FakeApi, FakeServer, Recorded, Reply, Responder, Usage
from tests.providers.script import PLAN_USAGE, counted, expected_usage
from tests.providers.support import MODELS, PRICING
from tests.providers.test_agent_turn_calls import turn_request
from tests.providers.test_provider_calls import CITIES, plan_request, text_request

CUT_OFF_PLAN = '{"nodes": [{"id": "pop_paris", "tool": "get_pop'
WRITE_USAGE = Usage(input=80, output=30)


def with_timeouts(provider: LLMProvider, timeouts: RoleTimeouts) -> LLMProvider:
    """The same provider, with other timeouts."""
    assert isinstance(provider, OpenAIProvider | AnthropicProvider)
    settings = dataclasses.replace(provider._settings, timeouts=timeouts)
    return type(provider)(settings)


def refusal(api: FakeApi, usage: Usage) -> Responder:
    """A reply the model refused to give (OpenAI: `refusal`; Anthropic: stop_reason refusal)."""

    def reply(request: Recorded) -> Reply:
        answered = api.text_reply("I can't help with that.", usage)(request)
        if api.name == "openai":
            answered.body["choices"][0]["message"]["refusal"] = "I can't help with that."
        else:
            answered.body["stop_reason"] = "refusal"
        return answered

    return reply


def slow(responder: Responder, seconds: float) -> Responder:
    def reply(request: Recorded) -> Reply:
        time.sleep(seconds)
        return responder(request)

    return reply


def sent_chars(api: FakeApi, request: Recorded) -> str:
    return api.system_text(request) + api.user_text(request)


def reported(model: str, usage: Usage) -> dict[str, object]:
    return counted(expected_usage(model, usage))


def estimate(model: str, sent: str, output: int) -> TokenUsage:
    usage = TokenUsage(input_tokens=estimate_tokens(sent), output_tokens=output, estimated=True)
    return PRICING.priced(usage, model)


async def test_a_plan_cut_off_at_its_limit_fails_with_the_usage_the_server_reported(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply(CUT_OFF_PLAN, PLAN_USAGE, cut_off=True))
    with pytest.raises(ProviderError) as failed:
        await provider.plan(plan_request(), CITIES)
    assert failed.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert failed.value.usage is not None
    assert counted(failed.value.usage) == pytest.approx(reported(MODELS.planner, PLAN_USAGE))
    assert failed.value.usage.cost_usd > 0 and not failed.value.usage.estimated


async def test_an_unparseable_plan_fails_with_the_usage_the_server_reported(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("Sure! First Paris, then Tokyo.", PLAN_USAGE))
    with pytest.raises(ProviderError) as failed:
        await provider.plan(plan_request(), CITIES)
    assert failed.value.usage is not None
    assert counted(failed.value.usage) == pytest.approx(reported(MODELS.planner, PLAN_USAGE))


async def test_a_cannot_plan_carries_the_usage_of_the_call_that_said_it(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply('{"nodes": [], "cannot_plan": "no tool for it"}', PLAN_USAGE))
    with pytest.raises(PlanningError) as failed:
        await provider.plan(plan_request(), CITIES)
    assert isinstance(failed.value, ModelCannotPlanError)
    assert "no tool for it" in str(failed.value)
    spent = spent_by(failed.value)
    assert spent is not None
    assert counted(spent) == pytest.approx(reported(MODELS.planner, PLAN_USAGE))


async def test_a_refused_plan_fails_with_the_usage_the_server_reported(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(refusal(api, PLAN_USAGE))
    with pytest.raises(ProviderError) as failed:
        await provider.plan(plan_request(), CITIES)
    assert failed.value.code is ErrorCode.POLICY_VIOLATION
    assert failed.value.usage is not None
    assert counted(failed.value.usage) == pytest.approx(reported(MODELS.planner, PLAN_USAGE))


async def test_an_empty_writer_reply_fails_with_the_usage_the_server_reported(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("", WRITE_USAGE))
    with pytest.raises(ProviderError) as failed:
        await provider.write(text_request())
    assert failed.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert failed.value.usage is not None
    assert counted(failed.value.usage) == pytest.approx(reported(MODELS.worker, WRITE_USAGE))


async def test_an_unparseable_verdict_fails_with_the_usage_the_server_reported(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("It reads well.", WRITE_USAGE))
    judging = JudgeRequest(goal="Compare Paris and Tokyo", report="# R", criteria=["compares"])
    with pytest.raises(ProviderError) as failed:
        await provider.judge(judging)
    assert failed.value.usage is not None
    assert counted(failed.value.usage) == pytest.approx(reported(MODELS.judge, WRITE_USAGE))


async def test_a_refused_agent_turn_fails_with_the_usage_the_server_reported(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(refusal(api, WRITE_USAGE))
    with pytest.raises(ProviderError) as failed:
        await provider.agent_turn(turn_request())
    assert failed.value.usage is not None
    assert counted(failed.value.usage) == pytest.approx(reported(MODELS.planner, WRITE_USAGE))


@pytest.mark.parametrize("status", [400, 500])
async def test_a_refused_request_is_charged_its_estimated_input_and_no_output(
    api: FakeApi, server: FakeServer, provider: LLMProvider, status: int
) -> None:
    server.enqueue(api.error_reply(status, "the server cannot take this request"))
    with pytest.raises(ProviderError) as failed:
        await provider.plan(plan_request(), CITIES)
    usage = failed.value.usage
    assert usage is not None and usage.estimated
    # (a bare 500 from a server that is not OpenAI's is first tried in the next compatibility
    # mode, which fails too: the charge is the call's, estimated from what it was asked)
    sent = server.requests[0]
    assert counted(usage) == pytest.approx(
        counted(estimate(MODELS.planner, sent_chars(api, sent), 0))
    )
    assert usage.input_tokens > 100 and usage.output_tokens == 0 and usage.cost_usd > 0


async def test_an_abandoned_call_is_charged_its_estimated_input_and_its_whole_output_cap(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(slow(api.text_reply("{}", PLAN_USAGE), 2.0))
    hasty = with_timeouts(provider, RoleTimeouts(planner=0.3))
    with pytest.raises(ProviderError) as failed:
        await hasty.plan(plan_request(), CITIES)
    assert failed.value.code is ErrorCode.TIMEOUT
    usage = failed.value.usage
    assert usage is not None and usage.estimated
    # (a bare 500 from a server that is not OpenAI's is first tried in the next compatibility
    # mode, which fails too: the charge is the call's, estimated from what it was asked)
    sent = server.requests[0]
    expected = estimate(MODELS.planner, sent_chars(api, sent), PLAN_MAX_TOKENS)
    assert counted(usage) == pytest.approx(counted(expected))


async def test_an_abandoned_verdict_is_charged_the_verdicts_output_cap(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(slow(api.text_reply("{}", PLAN_USAGE), 2.0))
    hasty = with_timeouts(provider, RoleTimeouts(judge=0.3))
    judging = JudgeRequest(goal="Compare Paris and Tokyo", report="# R", criteria=["compares"])
    with pytest.raises(ProviderError) as failed:
        await hasty.judge(judging)
    assert failed.value.usage is not None
    assert failed.value.usage.output_tokens == VERDICT_MAX_TOKENS


async def test_a_writer_call_gives_up_after_the_writer_timeout_it_was_given(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(slow(api.text_reply("Paris.", WRITE_USAGE), 2.0))
    hasty = with_timeouts(provider, RoleTimeouts(writer=0.3))
    request = text_request().model_copy(update={"max_output_tokens": 321})
    with pytest.raises(ProviderError) as failed:
        await hasty.write(request)
    assert failed.value.code is ErrorCode.TIMEOUT
    assert failed.value.usage is not None and failed.value.usage.output_tokens == 321


def test_role_timeouts_are_read_from_the_environment_with_defaults_for_the_rest() -> None:
    timeouts = role_timeouts(
        {"HARNESS_PLANNER_TIMEOUT_SECONDS": "900", "HARNESS_AGENT_TURN_TIMEOUT_SECONDS": "45.5"}
    )
    assert timeouts == RoleTimeouts(planner=900.0, agent_turn=45.5)
    assert RoleTimeouts().planner >= 600


@pytest.mark.parametrize("value", ["soon", "0", "-5", "3601", "nan"])
def test_a_role_timeout_that_is_not_a_number_of_seconds_in_range_is_refused_in_one_line(
    value: str,
) -> None:
    with pytest.raises(ProviderConfigError) as refused:
        role_timeouts({"HARNESS_JUDGE_TIMEOUT_SECONDS": value})
    message = str(refused.value)
    assert "HARNESS_JUDGE_TIMEOUT_SECONDS" in message and value in message
    assert "\n" not in message


@pytest.mark.parametrize("cut_off", [True, False])
async def test_an_agent_turn_that_says_nothing_fails_with_the_usage_the_server_reported(
    api: FakeApi, server: FakeServer, provider: LLMProvider, cut_off: bool
) -> None:
    spent = Usage(900, 300)  # cut off at its limit before any text, or neither call nor text
    server.enqueue(api.text_reply("", spent, cut_off=cut_off))
    with pytest.raises(ProviderError) as failed:
        await provider.agent_turn(turn_request())
    assert failed.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert failed.value.usage is not None
    assert counted(failed.value.usage) == pytest.approx(reported(MODELS.planner, spent))
