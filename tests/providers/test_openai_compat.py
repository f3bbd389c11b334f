"""OpenAI-compatible servers that differ from OpenAI's API: the compatibility modes of structured
outputs, auto mode learning from a refusal, and the token limit a server honours."""

from __future__ import annotations

import openai
import pytest
from temporalio.client import Client

from activities.llm import ProviderConfigError, ProviderError, ProviderRegistry
from activities.llm.config import OPENAI, ProviderSettings
from activities.llm.openai_compat import (
    COMPAT_VARIABLE,
    Compat,
    CompatMode,
    Structured,
    compat_setting,
    refuses_mode,
)
from activities.llm.openai_provider import OpenAIProvider
from activities.llm.structured import PLAN_EXAMPLE, PLAN_SCHEMA
from harness.catalog.llm import JudgeRequest, TextRequest
from harness.core.errors import ErrorCode
from harness.engine.messages import PlanRequest
from harness.engine.run import RunPhase, RunRequest
from scenarios import get_scenario
from tests.fakes import FakeApi, FakeServer, Recorded, Usage
from tests.fakes.openai_api import LLAMA_CPP_PYTHON, OLLAMA, LocalServer, OpenAIApi, Quirks
from tests.providers.script import PLAN_USAGE, CitiesScript, cities_plan_json
from tests.providers.support import MODELS, PRICING, TEST_KEY
from tests.providers.test_runs import set_provider_env
from tests.support import execute_run, running_worker
from worker.app import build_worker

CITIES = get_scenario("cities")
GOAL = "Compare Paris and Tokyo"
VERDICT = '{"passed": true, "score": 0.9, "reasons": ["both cities are compared,\\nside by side"]}'


@pytest.fixture
def api() -> FakeApi:
    """These are OpenAI's API only."""
    return OpenAIApi()


def provider_at(server: FakeServer, compat: CompatMode | None = None) -> OpenAIProvider:
    settings = ProviderSettings(
        vendor=OPENAI,
        api_key=TEST_KEY,
        models=MODELS,
        pricing=PRICING,
        base_url=f"{server.url}/v1",
    )
    return OpenAIProvider(settings, compat=compat)


def cities_model(api: FakeApi) -> CitiesScript:
    return CitiesScript(api, GOAL)


def local(api: FakeApi, quirks: Quirks) -> LocalServer:
    """The cities model (its verdict with an escaped newline in a reason) behind `quirks`."""
    script = CitiesScript(api, GOAL)

    def model(request: Recorded) -> tuple[str, Usage]:
        text, usage = script.answer(request)
        return (VERDICT if request.body["model"] == MODELS.judge else text), usage

    return LocalServer(model, quirks)


def plan_request() -> PlanRequest:
    return PlanRequest(
        run_id="run-test", goal=GOAL, scenario="cities", attempt=1, catalog=CITIES.catalog()
    )


def judge_request() -> JudgeRequest:
    return JudgeRequest(goal=GOAL, report="# Paris and Tokyo", criteria=["compares both"])


def kind(request: Recorded) -> str:
    """The mode a request asks in, as the server sees it."""
    if "tool_choice" in request.body:
        return "tools"
    response_format = request.body.get("response_format")
    return response_format["type"] if response_format else "prompt"


def test_unset_or_auto_is_auto_and_each_mode_is_itself() -> None:
    assert compat_setting({}) is None
    assert compat_setting({COMPAT_VARIABLE: " Auto "}) is None
    for mode in CompatMode:
        assert compat_setting({COMPAT_VARIABLE: mode.value}) is mode


def test_an_unknown_mode_is_a_config_error_that_names_the_choices() -> None:
    with pytest.raises(ProviderConfigError) as raised:
        compat_setting({COMPAT_VARIABLE: "grammar"})
    assert str(raised.value) == (
        "HARNESS_OPENAI_COMPAT='grammar' is not a compatibility mode; "
        "choose one of auto, strict, json_object, tools, prompt"
    )


async def test_auto_mode_falls_back_to_json_object_when_json_schema_gets_a_500_and_remembers(
    api: FakeApi, server: FakeServer
) -> None:
    server.fallback = local(api, LLAMA_CPP_PYTHON)
    provider = provider_at(server)
    first = await provider.plan(plan_request(), CITIES)
    again = await provider.plan(plan_request(), CITIES)
    assert first.plan == again.plan and len(first.plan.nodes) == 7
    assert [kind(request) for request in server.requests] == [
        "json_schema",
        "json_object",
        "json_object",
    ], "the second plan goes straight to the mode learned"
    told = server.requests[1].body["messages"][0]["content"]
    assert '"cannot_plan"' in told and "matches this JSON schema" in told


async def test_a_bare_500_that_the_next_mode_gets_too_is_an_outage_that_switches_nothing(
    api: FakeApi, server: FakeServer
) -> None:
    server.enqueue(*[api.error_reply(500, "upstream connect error")] * 2)
    server.fallback = local(api, LLAMA_CPP_PYTHON)
    provider = provider_at(server)
    with pytest.raises(ProviderError) as raised:
        await provider.plan(plan_request(), CITIES)
    assert raised.value.code is ErrorCode.PROVIDER_UNAVAILABLE
    await provider.plan(plan_request(), CITIES)
    assert [kind(request) for request in server.requests] == [
        "json_schema",
        "json_object",
        "json_schema",
        "json_object",
    ], "the outage taught nothing: the next call starts strict and learns from its own 500"


async def test_auto_mode_learns_per_model(api: FakeApi, server: FakeServer) -> None:
    server.fallback = local(api, LLAMA_CPP_PYTHON)
    provider = provider_at(server)
    await provider.plan(plan_request(), CITIES)
    verdict = await provider.judge(judge_request())
    assert verdict.reasons == ["both cities are compared,\nside by side"]
    assert [(r.body["model"], kind(r)) for r in server.requests] == [
        (MODELS.planner, "json_schema"),
        (MODELS.planner, "json_object"),
        (MODELS.judge, "json_schema"),
        (MODELS.judge, "json_object"),
    ]


async def test_auto_mode_steps_through_every_mode_a_server_refuses_by_name(
    api: FakeApi, server: FakeServer
) -> None:
    server.enqueue(
        api.error_reply(400, "response_format 'json_schema' is not supported"),
        api.error_reply(422, "json_object: unsupported value"),
        api.error_reply(400, "tool_choice: only 'auto' is supported"),
        api.text_reply("Sure! " + cities_plan_json(GOAL), PLAN_USAGE),
    )
    response = await provider_at(server).plan(plan_request(), CITIES)
    assert len(response.plan.nodes) == 7
    assert [kind(request) for request in server.requests] == [
        "json_schema",
        "json_object",
        "tools",
        "prompt",
    ]


async def test_auto_mode_does_not_switch_on_a_400_that_names_no_structured_output(
    api: FakeApi, server: FakeServer
) -> None:
    server.enqueue(api.error_reply(400, "messages: the conversation is too long"))
    with pytest.raises(ProviderError) as raised:
        await provider_at(server).plan(plan_request(), CITIES)
    assert "the conversation is too long" in raised.value.message
    assert [kind(request) for request in server.requests] == ["json_schema"]


async def test_an_explicit_mode_never_switches(api: FakeApi, server: FakeServer) -> None:
    server.fallback = local(api, LLAMA_CPP_PYTHON)
    with pytest.raises(ProviderError) as raised:
        await provider_at(server, CompatMode.STRICT).plan(plan_request(), CITIES)
    assert "(500)" in raised.value.message
    assert [kind(request) for request in server.requests] == ["json_schema"]


@pytest.mark.parametrize("mode", list(CompatMode))
async def test_each_mode_asks_for_a_plan_as_it_says(
    api: FakeApi, server: FakeServer, mode: CompatMode
) -> None:
    server.fallback = local(api, OLLAMA)
    response = await provider_at(server, mode).plan(plan_request(), CITIES)
    assert len(response.plan.nodes) == 7
    (request,) = server.requests
    body, system = request.body, api.system_text(request)
    assert kind(request) == mode.value.replace("strict", "json_schema")
    assert ("matches this JSON schema" in system) is (mode in ("json_object", "prompt"))
    assert (PLAN_EXAMPLE in system) is (mode == "prompt")
    if mode is CompatMode.TOOLS:
        (function,) = body["tools"]
        assert function["function"] == {
            "name": "plan",
            "description": "Give the plan.",
            "parameters": PLAN_SCHEMA,
        }
        assert body["tool_choice"] == {"type": "function", "function": {"name": "plan"}}


async def test_a_local_server_gets_both_token_limits_and_honours_max_tokens(
    api: FakeApi, server: FakeServer
) -> None:
    fake = local(api, OLLAMA)
    server.fallback = fake
    provider = provider_at(server)
    await provider.plan(plan_request(), CITIES)
    await provider.write(
        TextRequest(system="You write.", prompt="Describe Paris.", draft="", max_output_tokens=300)
    )
    assert fake.caps == [16_000, 300]
    for request in server.requests:
        assert request.body["max_tokens"] == request.body["max_completion_tokens"]


async def test_a_server_that_refuses_max_tokens_by_name_is_sent_the_other_limit_only(
    api: FakeApi, server: FakeServer
) -> None:
    refusal = "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."
    server.enqueue(api.error_reply(400, refusal))
    server.fallback = cities_model(api)
    provider = provider_at(server)
    await provider.write(TextRequest(system="You write.", prompt="Describe Paris.", draft=""))
    await provider.write(TextRequest(system="You write.", prompt="Describe Tokyo.", draft=""))
    sent = [("max_tokens" in r.body, "max_completion_tokens" in r.body) for r in server.requests]
    assert sent == [(True, True), (False, True), (False, True)]


async def test_a_limit_too_large_for_the_context_is_an_error_not_a_refused_parameter(
    api: FakeApi, server: FakeServer
) -> None:
    too_large = "'max_tokens' or 'max_completion_tokens' is too large: 16000 (context 8192)"
    server.enqueue(api.error_reply(400, too_large))
    with pytest.raises(ProviderError) as raised:
        await provider_at(server).write(
            TextRequest(system="You write.", prompt="Describe Paris.", draft="")
        )
    assert "is too large" in raised.value.message
    (request,) = server.requests
    assert "max_tokens" in request.body and "max_completion_tokens" in request.body


@pytest.mark.parametrize(
    "base_url", ["https://api.openai.com/v1", "https://team.openai.azure.com/openai/v1"]
)
def test_openais_own_hosts_get_max_completion_tokens_only(base_url: str) -> None:
    settings = ProviderSettings(
        vendor=OPENAI, api_key=TEST_KEY, models=MODELS, pricing=PRICING, base_url=base_url
    )
    shape = Compat(settings.endpoint()).shape(
        "gpt-4.1", [], 100, Structured("plan", PLAN_SCHEMA, PLAN_EXAMPLE)
    )
    assert shape.max_completion_tokens == 100
    assert isinstance(shape.max_tokens, openai.Omit)


@pytest.mark.parametrize(
    ("status", "message", "mode", "official", "refused"),
    [
        (500, "internal server error", CompatMode.STRICT, False, True),
        (500, "internal server error", CompatMode.STRICT, True, False),
        (500, "internal server error", CompatMode.JSON_OBJECT, False, False),
        (500, "response_format json_schema is unavailable", CompatMode.STRICT, True, True),
        (400, "type 'json_object' is not supported", CompatMode.JSON_OBJECT, False, True),
        (422, "grammar could not be built", CompatMode.STRICT, False, True),
        (400, "tool_choice: only 'auto' is supported", CompatMode.TOOLS, False, True),
        (400, "the conversation is too long", CompatMode.STRICT, False, False),
        (429, "response_format: rate limited", CompatMode.STRICT, False, False),
        (400, "response_format", CompatMode.PROMPT, False, False),
    ],
)  # fmt: skip
def test_what_counts_as_a_refusal_of_a_mode(
    status: int, message: str, mode: CompatMode, official: bool, refused: bool
) -> None:
    assert refuses_mode(status, message, mode, official) is refused


RUNS = [
    (None, LLAMA_CPP_PYTHON),
    (None, OLLAMA),
    (CompatMode.STRICT, OLLAMA),
    (CompatMode.JSON_OBJECT, LLAMA_CPP_PYTHON),
    (CompatMode.TOOLS, LLAMA_CPP_PYTHON),
    (CompatMode.PROMPT, LLAMA_CPP_PYTHON),
    (CompatMode.PROMPT, OLLAMA),
]


@pytest.mark.parametrize(
    ("mode", "quirks"), RUNS, ids=[f"{mode or 'auto'}-{quirks.name}" for mode, quirks in RUNS]
)
async def test_a_cities_run_succeeds_against_a_local_server_capped_in_every_call(
    client: Client,
    task_queue: str,
    api: FakeApi,
    server: FakeServer,
    mode: CompatMode | None,
    quirks: Quirks,
) -> None:
    fake = local(api, quirks)
    server.fallback = fake
    async with running_worker(client, task_queue, provider_at(server, mode)):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.attempts == 1
    assert result.verdict is not None and result.verdict.score == 0.9, "the judge's verdict read"
    assert fake.caps and None not in fake.caps, "every call capped"


async def test_the_worker_takes_its_mode_from_the_environment(
    client: Client,
    task_queue: str,
    api: FakeApi,
    server: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_provider_env(monkeypatch, api, server, TEST_KEY)
    monkeypatch.setenv(COMPAT_VARIABLE, "tools")
    server.fallback = local(api, LLAMA_CPP_PYTHON)
    async with build_worker(client, task_queue, ProviderRegistry(default="scripted")):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL, provider="openai"))
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert {kind(r) for r in server.requests if r.body["model"] != MODELS.worker} == {"tools"}
