"""Whole runs on a real dev server with each real provider against its fake API."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.llm import LLMProvider, ProviderRegistry
from activities.llm.structured import PLAN_SCHEMA, PlanDraft
from harness.engine.budget import BudgetLimits
from harness.engine.dag import NodeStatus
from harness.engine.run import RunPhase, RunRequest
from scenarios.registry import registered
from tests.fakes import FakeApi, FakeServer, Recorded, Reply
from tests.providers.history import exported_history, plan_activities
from tests.providers.script import (
    PLAN_USAGE,
    REPORT_USAGE,
    SUMMARY_USAGE,
    CitiesScript,
    counted,
    expected_usage,
)
from tests.providers.support import MODELS, TEST_KEY
from tests.scenarios.tides import HIGH_WATER, PLAN, QUESTION, TIDES
from tests.support import execute_run, history_events, running_worker
from worker.app import build_worker

GOAL = "Compare Paris and Tokyo"
CITY_TOOLS = ("get_population", "get_timezone", "summarize_city", "aggregate_report")


def set_provider_env(
    monkeypatch: pytest.MonkeyPatch, api: FakeApi, server: FakeServer, key: str
) -> None:
    prefix = api.name.upper()
    monkeypatch.setenv(f"{prefix}_API_KEY", key)
    monkeypatch.setenv(f"{prefix}_BASE_URL", api.base_url(server.url))
    monkeypatch.setenv("HARNESS_PLANNER_MODEL", MODELS.planner)
    monkeypatch.setenv("HARNESS_WORKER_MODEL", MODELS.worker)
    monkeypatch.setenv("HARNESS_JUDGE_MODEL", MODELS.judge)


def planner_requests(server: FakeServer) -> int:
    return sum(request.body["model"] == MODELS.planner for request in server.requests)


async def test_a_cities_run_succeeds_end_to_end_against_the_api(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.fallback = CitiesScript(api, GOAL)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None and "Paris" in result.report and "Tokyo" in result.report
    assert result.attempt_history[0].planned_by == f"{api.name}:{MODELS.planner}"
    assert all(node.status is NodeStatus.DONE for node in result.nodes)
    writes = [request for request in server.requests if request.body["model"] == MODELS.worker]
    assert len(writes) == 3, "two city summaries and the report"
    planning = server.requests[0]
    assert api.output_schema(planning) == PLAN_SCHEMA
    assert all(f"\n## {tool}" in api.system_text(planning) for tool in CITY_TOOLS)


async def test_run_usage_and_cost_are_the_reported_tokens_times_the_prices(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    script = CitiesScript(api, GOAL)
    server.fallback = script
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED, result.error
    nodes = {node.id: node for node in result.nodes}
    summary = expected_usage(MODELS.worker, SUMMARY_USAGE)
    for node_id in ("sum_paris", "sum_tokyo"):
        usage = nodes[node_id].usage
        assert usage is not None and counted(usage) == pytest.approx(counted(summary))
    report_usage = nodes["report"].usage
    assert report_usage is not None
    assert counted(report_usage) == pytest.approx(
        counted(expected_usage(MODELS.worker, REPORT_USAGE))
    )
    assert nodes["pop_paris"].usage is None, "a lookup calls no model"
    assert (MODELS.planner, PLAN_USAGE) in script.served
    assert counted(result.usage) == pytest.approx(counted(script.total()))
    assert result.usage.cost_usd > 0 and result.usage.estimated is False


@pytest.mark.requires_local_server("the test server does not pass the last failure to the retry")
async def test_a_rate_limit_with_retry_after_is_retried_and_succeeds_on_attempt_two(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.error_reply(429, "rate limited", {"retry-after": "1"}))
    server.fallback = CitiesScript(api, GOAL)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert planner_requests(server) == 2
    (planning,) = plan_activities(await history_events(client, result.run_id))
    assert planning.attempt == 2 and planning.failure is None
    assert planning.last_failure is not None
    info = planning.last_failure.application_failure_info
    assert info.type == "RATE_LIMITED" and not info.non_retryable
    assert 1.0 <= info.next_retry_delay.ToTimedelta().total_seconds() <= 1.5  # jittered


async def test_a_rejected_key_fails_the_run_at_once_with_a_message_naming_the_variable(
    client: Client,
    task_queue: str,
    api: FakeApi,
    server: FakeServer,
    provider: LLMProvider,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.enqueue(api.error_reply(401, f"Incorrect API key provided: {TEST_KEY}"))
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    variable = "ANTHROPIC_API_KEY" if api.name == "anthropic" else "OPENAI_API_KEY"
    assert result.status is RunPhase.FAILED_PROVIDER
    assert result.error is not None and f"{variable} was rejected (401)" in result.error
    assert len(server.requests) == 1, "no retries, no replans"
    events = await history_events(client, result.run_id)
    (planning,) = plan_activities(events)
    assert planning.attempt == 1 and planning.failure is not None
    assert planning.failure.application_failure_info.type == "AUTH_FAILED"
    assert planning.failure.application_failure_info.non_retryable
    history = await exported_history(client, result.run_id)
    assert "AUTH_FAILED" in history and TEST_KEY not in history
    assert "was rejected (401)" in caplog.text and TEST_KEY not in caplog.text


async def test_a_reply_that_is_not_a_plan_is_replanned_with_the_parse_problem(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    prose = "Sure! I would first look up Paris, then Tokyo."
    server.enqueue(api.text_reply(prose, PLAN_USAGE))
    server.fallback = CitiesScript(api, GOAL)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    first = plan_activities(await history_events(client, result.run_id))[0]
    assert first.attempt == 1 and first.failure is not None
    info = first.failure.application_failure_info
    assert info.type == "INVALID_MODEL_OUTPUT" and info.non_retryable
    assert "is not a plan" in first.failure.message and "Sure! I would" in first.failure.message
    assert result.status is RunPhase.SUCCEEDED and result.attempts == 2
    assert any("is not a plan" in (event.message or "") for event in result.trace)
    replan = [r for r in server.requests if r.body["model"] == MODELS.planner][1]
    assert "INVALID_MODEL_OUTPUT: the model's reply is not a plan" in api.user_text(replan)


async def test_the_api_key_from_the_environment_never_reaches_workflow_history_or_logs(
    client: Client,
    task_queue: str,
    api: FakeApi,
    server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    secret = f"sk-live-{uuid.uuid4().hex}"
    prices = tmp_path / "prices.json"
    prices.write_text('{"test-planner": {"input": 3, "output": 15}}')
    set_provider_env(monkeypatch, api, server, secret)
    monkeypatch.setenv("HARNESS_PRICING_FILE", str(prices))
    server.fallback = CitiesScript(api, GOAL)
    registry = ProviderRegistry(default=api.name)
    async with build_worker(client, task_queue, registry):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempt_history[0].planned_by == f"{api.name}:{MODELS.planner}"
    sent = server.requests[0].headers
    assert secret in sent.get("x-api-key", "") + sent.get("authorization", "")
    history = await exported_history(client, result.run_id)
    assert GOAL in history and secret not in history
    captured = capsys.readouterr()
    assert secret not in captured.out + captured.err


async def test_a_run_can_choose_a_provider_other_than_the_workers_default(
    client: Client,
    task_queue: str,
    api: FakeApi,
    server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_provider_env(monkeypatch, api, server, TEST_KEY)
    server.fallback = CitiesScript(api, GOAL)
    async with build_worker(client, task_queue, ProviderRegistry(default="scripted")):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL, provider=api.name))
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempt_history[0].planned_by == f"{api.name}:{MODELS.planner}"
    served = {request.body["model"] for request in server.requests}
    assert {MODELS.planner, MODELS.worker} <= served


async def test_a_run_for_a_provider_without_a_key_fails_with_the_missing_key_message(
    client: Client,
    task_queue: str,
    api: FakeApi,
    server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_provider_env(monkeypatch, api, server, "")
    async with build_worker(client, task_queue, ProviderRegistry(default="scripted")):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL, provider=api.name))
    assert result.status is RunPhase.FAILED_PROVIDER
    assert result.error is not None
    assert f"{api.name.upper()}_API_KEY is not set" in result.error
    assert server.requests == []


@dataclass
class TidesScript:
    """A model for a user's pack: it plans the tides plan, writes the report from the results
    its prompt carries (a port's line only when its time is in the prompt), and judges."""

    api: FakeApi

    def __call__(self, request: Recorded) -> Reply:
        model, prompt = request.body["model"], self.api.user_text(request)
        if model == MODELS.planner:
            text = PlanDraft.of(PLAN).model_dump_json()
        elif model == MODELS.judge:
            text = '{"passed": true, "score": 1.0, "reasons": ["both ports are answered"]}'
        else:
            lines = [
                f"- {port}: high water at {t}" for port, (t, _) in HIGH_WATER.items() if t in prompt
            ]
            text = "\n".join(["# High water", "", *lines])
        return self.api.text_reply(text, SUMMARY_USAGE)(request)


async def test_a_users_pack_planned_by_the_api_finishes_with_write_report_and_succeeds(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.fallback = TidesScript(api)
    with registered(TIDES):
        async with running_worker(client, task_queue, provider):
            result = await execute_run(
                client, task_queue, RunRequest(goal=QUESTION, scenario=TIDES.name)
            )
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempt_history[0].planned_by == f"{api.name}:{MODELS.planner}"
    assert (
        result.report
        == "# High water\n\n- Brest: high water at 06:12\n- Cherbourg: high water at 07:40"
    )
    assert result.verdict is not None
    assert result.verdict.checked_by[:2] == ["structure", "tides.check"]
    planning = server.requests[0]
    assert "\n## tide\n" in api.system_text(planning)
    assert "\n## write_report (FINAL_SYNTHESIS)\n" in api.system_text(planning)


async def test_a_run_with_a_cost_limit_refuses_an_unpriced_writer_and_names_how_to_price_it(
    client: Client,
    task_queue: str,
    api: FakeApi,
    server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    prices = tmp_path / "prices.json"  # the writer's model is left out
    prices.write_text(
        '{"test-planner": {"input": 3, "output": 15}, "test-judge": {"input": 2, "output": 10}}'
    )
    set_provider_env(monkeypatch, api, server, TEST_KEY)
    monkeypatch.setenv("HARNESS_PRICING_FILE", str(prices))
    server.fallback = CitiesScript(api, GOAL)
    limited = RunRequest(goal=GOAL, limits=BudgetLimits(max_cost_usd=5.0))
    async with build_worker(client, task_queue, ProviderRegistry(default=api.name)):
        refused = await execute_run(client, task_queue, limited)
        unlimited = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert refused.status is not RunPhase.SUCCEEDED
    assert refused.error is not None
    assert f"does not price {MODELS.worker}: add it to the JSON file named by" in refused.error
    assert unlimited.status is RunPhase.SUCCEEDED, unlimited.error
    assert unlimited.usage.unpriced_models == [MODELS.worker]
    assert unlimited.usage.cost_usd > 0  # the planner's and the judge's calls are priced
