"""Model calls stream (activities.llm.streaming), through each SDK provider against its fake: a
live slow server is not killed, a stalled one is found within the idle timeout, a cancelled
call closes its request, each chunk heartbeats with the attempt's details, and
HARNESS_LLM_STREAM=off sends the calls unstreamed."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import time

import pytest

from activities import heartbeats
from activities.heartbeats import progress, with_heartbeats
from activities.llm import LLMProvider, ProviderError
from activities.llm.anthropic_provider import AnthropicProvider
from activities.llm.base import ProviderConfigError
from activities.llm.config import ANTHROPIC, OPENAI, ProviderSettings, idle_timeout
from activities.llm.openai_provider import OpenAIProvider
from harness.catalog.llm import TextRequest
from harness.core.errors import ErrorCode
from harness.core.spent import carried, spent_in
from harness.core.usage import TokenUsage, estimate_tokens
from tests.fakes import FakeApi, FakeServer, Recorded, Reply, Responder, Usage
from tests.providers.support import MODELS, PRICING, TEST_KEY, build_provider

WRITE = TextRequest(system="You write.", prompt="Describe Paris.", draft="Paris.")
REPORT = "Paris is the capital of France, on the Seine, with about two million people."
WAIT_SECONDS = 30.0
"""A generous bound for what should take well under a second."""


def paced(responder: Responder, **stream: float | int) -> Responder:
    """`responder`'s reply, streamed as `stream` says (see tests.fakes.server.Reply)."""

    def reply(request: Recorded) -> Reply:
        return dataclasses.replace(responder(request), **stream)  # type: ignore[arg-type]

    return reply


def with_settings(provider: LLMProvider, **changes: object) -> LLMProvider:
    assert isinstance(provider, OpenAIProvider | AnthropicProvider)
    settings = dataclasses.replace(provider._settings, **changes)  # type: ignore[arg-type]
    return type(provider)(settings)


async def test_a_streamed_reply_keeps_its_text_and_usage_and_asks_for_the_usage(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(paced(api.text_reply(REPORT, Usage(40, 20, cache_read=8)), chunk_chars=3))
    reply = await provider.write(WRITE)
    assert reply.text == REPORT
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (40, 20)
    assert reply.usage.cached_tokens == 8 and not reply.usage.estimated
    sent = server.requests[0].body
    assert sent["stream"] is True
    if api.name == "openai":
        assert sent["stream_options"] == {"include_usage": True}


async def test_a_reply_streamed_slowly_for_longer_than_the_idle_timeout_succeeds(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(paced(api.text_reply(REPORT, Usage(40, 20)), chunk_chars=4, pause=0.1))
    patient = with_settings(provider, idle_timeout=1.0)
    started = time.monotonic()
    reply = await patient.write(WRITE)
    assert reply.text == REPORT
    assert time.monotonic() - started > 1.0  # the whole reply took longer than one idle timeout


async def test_a_server_stalled_after_one_chunk_fails_within_the_idle_timeout_charged_its_cap(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(paced(api.text_reply(REPORT, Usage(40, 20)), stall_after=1))
    hasty = with_settings(provider, idle_timeout=0.5)  # the writer's own timeout is 300 s
    started = time.monotonic()
    with pytest.raises(ProviderError) as failed:
        await hasty.write(WRITE)
    assert time.monotonic() - started < WAIT_SECONDS
    assert failed.value.code is ErrorCode.TIMEOUT
    assert "within 0.5 s" in failed.value.message
    usage = failed.value.usage
    assert usage is not None and usage.estimated
    sent = server.requests[0].body
    cap = sent.get("max_completion_tokens", sent.get("max_tokens"))
    assert usage.output_tokens == cap  # abandoned: charged the output cap it was sent with
    assert usage.input_tokens == estimate_tokens(WRITE.system + WRITE.prompt)
    assert await asyncio.to_thread(server.disconnected.wait, WAIT_SECONDS)


async def test_an_error_event_mid_stream_is_a_provider_outage_charged_its_input(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(paced(api.text_reply(REPORT, Usage(40, 20)), fail_after=2))
    with pytest.raises(ProviderError) as failed:
        await provider.write(WRITE)
    assert failed.value.code is ErrorCode.PROVIDER_UNAVAILABLE
    assert "Overloaded" in failed.value.message
    usage = failed.value.usage
    assert usage is not None and usage.estimated and usage.output_tokens == 0


async def test_a_cancelled_call_closes_its_request(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(paced(api.text_reply(REPORT, Usage(40, 20)), stall_after=2))
    call = asyncio.ensure_future(provider.write(WRITE))
    deadline = time.monotonic() + WAIT_SECONDS
    while not server.requests and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert server.requests
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await asyncio.to_thread(server.disconnected.wait, WAIT_SECONDS)


async def test_each_chunk_heartbeats_with_the_attempts_spending(
    api: FakeApi, server: FakeServer, provider: LLMProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heartbeats, "HEARTBEAT_EVERY_SECONDS", 3600.0)  # only chunks beat
    monkeypatch.setattr(heartbeats, "PROGRESS_EVERY_SECONDS", 0.0)
    server.enqueue(paced(api.text_reply(REPORT, Usage(40, 20)), chunk_chars=8))
    earlier = (carried(TokenUsage(input_tokens=900, output_tokens=70)),)
    beats: list[tuple[object, ...]] = []
    reply = await with_heartbeats(provider.write(WRITE), earlier, lambda *d: beats.append(d))
    assert reply.text == REPORT
    assert len(beats) > len(REPORT) // 8  # one per chunk at least
    assert all(spent_in(beat) == TokenUsage(input_tokens=900, output_tokens=70) for beat in beats)


async def test_chunk_heartbeats_are_throttled_and_none_outside_with_heartbeats() -> None:
    beats: list[tuple[object, ...]] = []

    async def many_chunks() -> None:
        for _ in range(100):
            progress()

    progress()  # outside: nothing to heartbeat with
    await with_heartbeats(many_chunks(), ("details",), lambda *d: beats.append(d))
    assert beats == [("details",)]


async def test_a_server_that_ignores_stream_and_answers_json_is_understood(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(paced(api.text_reply(REPORT, Usage(40, 20)), streams=False))
    reply = await provider.write(WRITE)
    assert reply.text == REPORT and reply.usage.output_tokens == 20


async def test_a_server_that_refuses_connections_is_a_connection_error(api: FakeApi) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    provider = build_provider(api, api.base_url(f"http://127.0.0.1:{port}"))
    with pytest.raises(ProviderError) as failed:
        await provider.write(WRITE)
    assert failed.value.code is ErrorCode.TIMEOUT
    assert "cannot connect" in failed.value.message


async def test_stream_off_sends_no_stream(api: FakeApi, server: FakeServer) -> None:
    vendor = ANTHROPIC if api.name == "anthropic" else OPENAI
    env = {
        vendor.key_variable: TEST_KEY,
        vendor.base_url_variable: api.base_url(server.url),
        "HARNESS_LLM_STREAM": "off",
    }
    settings = dataclasses.replace(
        ProviderSettings.from_env(vendor, env), models=MODELS, pricing=PRICING
    )
    assert not settings.stream
    provider = AnthropicProvider(settings) if api.name == "anthropic" else OpenAIProvider(settings)
    server.enqueue(api.text_reply(REPORT, Usage(40, 20)))
    assert (await provider.write(WRITE)).text == REPORT
    assert "stream" not in server.requests[0].body
    assert "stream_options" not in server.requests[0].body


@pytest.mark.parametrize("raw", ["0", "-5", "soon", "3601"])
def test_an_idle_timeout_that_is_no_number_of_seconds_is_refused_with_its_variable(
    raw: str,
) -> None:
    with pytest.raises(ProviderConfigError, match="HARNESS_MODEL_IDLE_TIMEOUT_SECONDS"):
        idle_timeout({"HARNESS_MODEL_IDLE_TIMEOUT_SECONDS": raw})


def test_a_stream_setting_other_than_on_or_off_is_refused() -> None:
    env = {OPENAI.key_variable: TEST_KEY, "HARNESS_LLM_STREAM": "maybe"}
    with pytest.raises(ProviderConfigError, match="HARNESS_LLM_STREAM"):
        ProviderSettings.from_env(OPENAI, env)
