"""Whole runs on a real dev server with the OpenAI provider through the Responses API: a cities
run whose models speak only Responses, and agent nodes whose tool calls go through it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from temporalio.client import Client

from activities.llm.config import OPENAI, ProviderSettings, RoleModels
from activities.llm.openai_provider import OpenAIProvider
from activities.llm.openai_responses import WireApi
from activities.llm.pricing import PricingTable
from harness.engine.agent_node import AgentResult, AgentStop
from harness.engine.dag import NodeStatus
from harness.engine.run import RunPhase, RunRequest
from harness.engine.trace import AgentRole
from scenarios.registry import registered
from tests.fakes import FakeServer, Recorded, Reply, Usage
from tests.fakes.openai_responses_api import OpenAIResponsesApi
from tests.providers.script import PLAN_USAGE, SUMMARY_USAGE, cities_plan_json
from tests.providers.support import MODELS, PRICE, PRICING, TEST_KEY
from tests.providers.test_agent_runs import AGENTS_PLAN, TideAgentScript
from tests.scenarios.tides import QUESTION, TIDES
from tests.support import execute_run, running_worker

API = OpenAIResponsesApi()
GOAL = "Compare Paris and Tokyo"
PRO = RoleModels(planner="gpt-5-pro", worker="gpt-5.1-codex-mini", judge="o3-pro")


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(API.route) as fake:
        yield fake


def provider_for(server: FakeServer, models: RoleModels, wire: WireApi) -> OpenAIProvider:
    prices = {**PRICING.prices(), **{model: PRICE for model in vars(models).values() if model}}
    settings = ProviderSettings(
        vendor=OPENAI,
        api_key=TEST_KEY,
        models=models,
        pricing=PricingTable(prices),
        base_url=API.base_url(server.url),
    )
    return OpenAIProvider(settings, wire=wire)


@dataclass
class ProCitiesScript:
    """The cities goal answered by Responses-only models, each reply with its reasoning."""

    served: list[str] = field(default_factory=list)

    def __call__(self, request: Recorded) -> Reply:
        model = request.body["model"]
        self.served.append(model)
        if model == PRO.planner:
            return API.text_reply(cities_plan_json(GOAL), PLAN_USAGE, reasoning=100)(request)
        if model == PRO.judge:
            verdict = '{"passed": true, "score": 1.0, "reasons": ["every city is compared"]}'
            return API.text_reply(verdict, Usage(500, 60), reasoning=20)(request)
        if "markdown report" in API.user_text(request):
            report = "# Paris and Tokyo\n\nTokyo is larger than Paris."
            return API.text_reply(report, Usage(700, 350))(request)
        return API.text_reply("A city with a long history.", SUMMARY_USAGE)(request)


async def test_a_cities_run_with_responses_only_models_succeeds_through_the_responses_api(
    client: Client, task_queue: str, server: FakeServer
) -> None:
    script = ProCitiesScript()
    server.fallback = script
    provider = provider_for(server, PRO, WireApi.AUTO)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None and "Tokyo is larger than Paris." in result.report
    assert result.attempt_history[0].planned_by == f"openai:{PRO.planner}"
    assert all(node.status is NodeStatus.DONE for node in result.nodes)
    assert {request.path for request in server.requests} == {"/v1/responses"}
    assert sorted(set(script.served)) == sorted({PRO.planner, PRO.worker, PRO.judge})
    assert result.usage.reasoning_tokens >= 100 and not result.usage.estimated
    assert result.usage.cost_usd > 0


async def test_agent_nodes_call_their_tools_through_the_responses_api(
    client: Client, task_queue: str, server: FakeServer
) -> None:
    provider = provider_for(server, MODELS, WireApi.RESPONSES)
    server.fallback = TideAgentScript(API)
    request = RunRequest(goal=QUESTION, scenario=TIDES.name, plan=AGENTS_PLAN)
    with registered(TIDES):
        async with running_worker(client, task_queue, provider):
            result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None and "Brest: high water at 06:12" in result.report
    for port in ("brest", "cherbourg"):
        agent = AgentResult.model_validate(next(n for n in result.nodes if n.id == port).result)
        assert agent.stopped is AgentStop.ANSWERED and agent.turns == 2
        assert [(call.tool, call.ok) for call in agent.tool_calls] == [("tide", True)]
    outputs = [
        item
        for request in server.requests
        for item in request.body["input"]
        if item.get("type") == "function_call_output"
    ]
    assert {item["call_id"] for item in outputs} == {"call_brest", "call_cherbourg"}
    agent_usage = result.usage_by_role[AgentRole.AGENT]
    assert agent_usage.total_tokens == 4 * (SUMMARY_USAGE.input + SUMMARY_USAGE.output)
