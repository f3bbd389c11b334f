"""Whole runs against each fake API in which model calls fail: every failed, cut-off and
abandoned call is in the run's usage and cost, estimated where the server reported none."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from activities.llm import LLMProvider
from activities.llm.config import PLAN_MAX_TOKENS, RoleTimeouts
from activities.llm.pricing import PricingTable
from harness.core.usage import TokenUsage
from harness.engine.run import RunPhase, RunRequest, RunResult
from harness.engine.trace import AgentRole, TraceKind
from scenarios.registry import registered
from tests.fakes import FakeApi, FakeServer, Recorded, Reply
from tests.providers.script import (
    PLAN_USAGE,
    CitiesScript,
    cities_plan_json,
    counted,
    expected_usage,
)
from tests.providers.support import MODELS, PRICING, build_provider
from tests.providers.test_agent_runs import AGENTS_PLAN
from tests.providers.test_failed_call_usage import (
    CUT_OFF_PLAN,
    WRITE_USAGE,
    estimate,
    refusal,
    sent_chars,
    slow,
    with_timeouts,
)
from tests.scenarios.tides import QUESTION, TIDES
from tests.support import execute_run, running_worker

GOAL = "Compare Paris and Tokyo"


def charged(result: RunResult) -> list[str]:
    return [event.message or "" for event in result.trace if event.kind is TraceKind.USAGE_CHARGE]


def assert_usage(result: RunResult, expected: TokenUsage) -> None:
    assert counted(result.usage) == pytest.approx(counted(expected))


async def test_a_plan_cut_off_at_its_limit_is_charged_to_the_run(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply(CUT_OFF_PLAN, PLAN_USAGE, cut_off=True))
    script = CitiesScript(api, GOAL)
    server.fallback = script
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED and result.attempts == 2, result.error
    assert_usage(result, script.total().plus(expected_usage(MODELS.planner, PLAN_USAGE)))
    assert result.usage.estimated is False
    tokens = PLAN_USAGE.input + PLAN_USAGE.output
    assert charged(result) == [f"failed planning cost {tokens} tokens"]


async def test_an_unparseable_plan_is_charged_to_the_run(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply("Sure! First Paris, then Tokyo.", PLAN_USAGE))
    script = CitiesScript(api, GOAL)
    server.fallback = script
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert_usage(result, script.total().plus(expected_usage(MODELS.planner, PLAN_USAGE)))


async def test_a_cannot_plan_is_charged_to_the_run_that_it_ends(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    cannot = api.text_reply('{"nodes": [], "cannot_plan": "no tool for it"}', PLAN_USAGE)
    server.enqueue(cannot, cannot)  # a cannot_plan is planned once more before the run ends
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL, ask_user=False))
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and "no tool for it" in result.error
    once = expected_usage(MODELS.planner, PLAN_USAGE)
    assert_usage(result, once.plus(once))
    assert result.usage.cost_usd > 0


async def test_a_request_the_server_refuses_is_charged_its_estimated_input(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.error_reply(400, "the server cannot take this request"))
    script = CitiesScript(api, GOAL)
    server.fallback = script
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    refused = estimate(MODELS.planner, sent_chars(api, server.requests[0]), 0)
    assert refused.input_tokens > 100
    assert_usage(result, script.total().plus(refused))
    assert result.usage.estimated is True
    assert any(message.endswith("tokens (estimated)") for message in charged(result))


@pytest.mark.requires_local_server("the test server does not pass heartbeat details to a retry")
async def test_an_abandoned_plan_is_charged_its_input_and_output_cap_though_its_retry_succeeds(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(slow(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE), 4.0))
    script = CitiesScript(api, GOAL)
    server.fallback = script
    hasty = with_timeouts(provider, RoleTimeouts(planner=1.0))
    async with running_worker(client, task_queue, hasty):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED and result.attempts == 1, result.error
    abandoned = estimate(MODELS.planner, sent_chars(api, server.requests[0]), PLAN_MAX_TOKENS)
    assert_usage(result, script.total().plus(abandoned))
    assert result.usage.estimated is True


@pytest.mark.requires_local_server("the test server does not pass heartbeat details to a retry")
async def test_a_server_error_retried_by_temporal_is_charged_for_the_failed_attempt(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.error_reply(502, "the server fell over"))
    script = CitiesScript(api, GOAL)
    server.fallback = script
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED and result.attempts == 1, result.error
    failed = estimate(MODELS.planner, sent_chars(api, server.requests[0]), 0)
    assert_usage(result, script.total().plus(failed))
    assert result.usage.estimated is True


class EmptyFirstWrite:
    """The cities model, whose first writer reply is empty."""

    def __init__(self, script: CitiesScript) -> None:
        self.script = script
        self.emptied = False

    def __call__(self, request: Recorded) -> Reply:
        if request.body["model"] == MODELS.worker and not self.emptied:
            self.emptied = True
            return self.script.api.text_reply("", WRITE_USAGE)(request)
        return self.script(request)


async def test_an_empty_writer_reply_is_charged_to_the_run(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    script = CitiesScript(api, GOAL)
    server.fallback = EmptyFirstWrite(script)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert_usage(result, script.total().plus(expected_usage(MODELS.worker, WRITE_USAGE)))
    assert any(message.startswith("the failed call of") for message in charged(result))


async def test_an_unparseable_verdict_is_charged_to_the_run(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    script = CitiesScript(api, GOAL)

    def judge_rambles(request: Recorded) -> Reply:
        if request.body["model"] == MODELS.judge:
            return api.text_reply("It reads well.", WRITE_USAGE)(request)
        return script(request)

    server.fallback = judge_rambles
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.verdict is not None and result.verdict.judge_skipped_reason is not None
    assert_usage(result, script.total().plus(expected_usage(MODELS.judge, WRITE_USAGE)))


async def test_a_refused_agent_turn_is_charged_to_the_run(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer
) -> None:
    pricing = PricingTable({**PRICING.prices(), MODELS.planner: PRICING.prices()[MODELS.planner]})
    provider: LLMProvider = build_provider(api, api.base_url(server.url), pricing=pricing)
    server.fallback = refusal(api, WRITE_USAGE)
    request = RunRequest(goal=QUESTION, scenario=TIDES.name, plan=AGENTS_PLAN, max_replans=0)
    with registered(TIDES):
        async with running_worker(client, task_queue, provider):
            result = await execute_run(client, task_queue, request)
    assert result.status is not RunPhase.SUCCEEDED
    failed = [node for node in result.nodes if node.error_code == "POLICY_VIOLATION"]
    assert failed, result.error
    turn = expected_usage(MODELS.planner, WRITE_USAGE)
    refused = TokenUsage()
    for _ in failed:
        refused = refused.plus(turn)
    assert counted(result.usage_by_role[AgentRole.AGENT]) == pytest.approx(counted(refused))
    assert_usage(result, refused)
