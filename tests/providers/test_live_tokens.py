"""A writer's reply goes to the web app as it streams (activities.token_stream), through each SDK
provider against its fake: in order, in few posts, under one call; a web app that is down or
refuses never fails or holds up the call, and is warned of once; the planner's and the judge's
calls, and a worker with no HARNESS_WEB_URL, send nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx2 as httpx
import pytest
from structlog.testing import capture_logs
from temporalio.testing import ActivityEnvironment

from activities.llm import LLMProvider
from activities.llm.scripted import ScriptedProvider
from activities.token_stream import TokenPoster, live_replies
from harness.catalog.llm import JudgeRequest, TextRequest
from harness.engine.live_tokens import TOKENS_PATH, TokenBatch, TokenChunk
from infra.settings import SettingsError, WebTarget
from tests.fakes import FakeApi, FakeServer, Usage
from tests.providers.test_streaming import paced

T = TypeVar("T")
WEB = WebTarget(url="http://web.test", token="s3cret-web-token")
WRITE = TextRequest(system="You write.", prompt="Describe Paris.", draft="Paris.")
REPORT = (
    "Paris is the capital of France, on the Seine, with about two million people; "
    "its museums, the Louvre first, hold some of the best known paintings of the world."
)
WAIT_SECONDS = 30.0


class WebApp:
    """A stand-in for `harness web`'s intake: the batches it was posted, and what it answers."""

    def __init__(self, status: int = 204) -> None:
        self.status = status
        self.batches: list[TokenBatch] = []
        self.headers: list[dict[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == TOKENS_PATH
        self.headers.append(dict(request.headers))
        self.batches.append(TokenBatch.model_validate_json(request.content))
        return httpx.Response(self.status)

    def chunks(self) -> list[TokenChunk]:
        return [chunk for batch in self.batches for chunk in batch.chunks]


def poster_for(app: WebApp, **options: float) -> TokenPoster:
    return TokenPoster(WEB, transport=httpx.MockTransport(app), **options)


async def in_activity(poster: TokenPoster | None, work: Callable[[], Awaitable[T]]) -> T:
    """`work` in an activity of run `run-1` that streams its replies, as node `report`'s."""

    async def activity_body() -> T:
        with live_replies(poster, "run-1", "report"):
            return await work()

    return await ActivityEnvironment().run(activity_body)


async def test_a_streamed_reply_reaches_the_web_app_in_order_in_few_posts_under_one_call(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(paced(api.text_reply(REPORT, Usage(40, 30)), chunk_chars=4))
    app = WebApp()
    poster = poster_for(app)
    reply = await in_activity(poster, lambda: provider.write(WRITE))
    await poster.aclose()
    chunks = app.chunks()
    assert reply.text == REPORT
    assert "".join(chunk.text for chunk in chunks) == REPORT  # all there before the call ended
    assert [chunk.seq for chunk in chunks] == list(range(len(chunks)))
    assert len(chunks) >= len(REPORT) // 4
    assert len(app.batches) < len(chunks) / 4  # batched, not a post per chunk
    assert {(chunk.stream, chunk.node) for chunk in chunks} == {("run-1", "report")}
    assert len({chunk.call for chunk in chunks}) == 1
    assert app.headers[0]["authorization"] == f"Bearer {WEB.token}"


async def test_two_replies_of_one_attempt_are_two_calls_each_counted_from_zero(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(
        paced(api.text_reply("First reply, in words.", Usage(10, 5)), chunk_chars=5),
        paced(api.text_reply("Second reply, in more words.", Usage(10, 5)), chunk_chars=5),
    )
    app = WebApp()
    poster = poster_for(app)

    async def two_writes() -> None:
        await provider.write(WRITE)
        await provider.write(WRITE)

    await in_activity(poster, two_writes)
    await poster.aclose()
    calls: dict[str, list[TokenChunk]] = {}
    for chunk in app.chunks():
        calls.setdefault(chunk.call, []).append(chunk)
    assert ["".join(c.text for c in chunks) for chunks in calls.values()] == [
        "First reply, in words.",
        "Second reply, in more words.",
    ]
    assert all(chunks[0].seq == 0 for chunks in calls.values())
    first, second = calls
    assert first.endswith(".1") and second.endswith(".2") and first[:-2] == second[:-2]


@pytest.mark.parametrize("refusal", ["down", 401, 500])
async def test_a_web_app_that_is_down_or_refuses_costs_one_warning_never_the_call(
    api: FakeApi, server: FakeServer, provider: LLMProvider, refusal: str | int
) -> None:
    server.enqueue(*[paced(api.text_reply(REPORT, Usage(40, 30)), chunk_chars=4, pause=0.002)] * 3)

    def web(request: httpx.Request) -> httpx.Response:
        if refusal == "down":
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(int(refusal))

    poster = TokenPoster(WEB, transport=httpx.MockTransport(web), retry_seconds=0.0)
    with capture_logs() as logs:
        replies = [await in_activity(poster, lambda: provider.write(WRITE)) for _ in range(3)]
        await poster.aclose()
    assert [reply.text for reply in replies] == [REPORT] * 3
    warnings = [log for log in logs if log["event"] == "tokens.web_unreachable"]
    assert len(warnings) == 1  # tried again and again (retry_seconds=0), warned once
    if refusal == 401:
        assert "HARNESS_WEB_TOKEN" in warnings[0]["problem"]


async def test_a_web_app_that_never_answers_holds_the_reply_up_a_second_at_most(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(paced(api.text_reply(REPORT, Usage(40, 30)), chunk_chars=8))
    stuck = asyncio.Event()

    async def hangs(request: httpx.Request) -> httpx.Response:
        await stuck.wait()
        return httpx.Response(204)

    poster = TokenPoster(WEB, transport=httpx.MockTransport(hangs))
    loop = asyncio.get_running_loop()
    started = loop.time()
    reply = await in_activity(poster, lambda: provider.write(WRITE))
    assert reply.text == REPORT
    assert loop.time() - started < 5.0
    stuck.set()
    await poster.aclose()


async def test_the_planners_and_judges_calls_and_a_worker_with_no_web_url_send_nothing(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    verdict = json.dumps({"passed": True, "score": 1.0, "reasons": ["fine"]})
    server.enqueue(
        paced(api.text_reply(verdict, Usage(10, 5)), chunk_chars=4),
        paced(api.text_reply(REPORT, Usage(10, 5)), chunk_chars=4),
    )
    app = WebApp()
    poster = poster_for(app)
    judged = JudgeRequest(goal="Paris?", report=REPORT, criteria=["names the river"])
    # a judge's call: its activity does not stream to followers
    await ActivityEnvironment().run(lambda: provider.judge(judged))
    # a writer on a worker with no web app
    assert TokenPoster.from_environment({"HARNESS_LLM_PROVIDER": "openai"}) is None
    reply = await in_activity(None, lambda: provider.write(WRITE))
    await poster.aclose()
    assert reply.text == REPORT
    assert app.batches == []


async def test_the_offline_writer_says_its_text_word_by_word_the_same_each_time() -> None:
    text = "Paris: 2.1 million people,\n  on the Seine. "
    request = WRITE.model_copy(update={"draft": text})
    said = []
    for _ in range(2):
        app = WebApp()
        poster = poster_for(app)
        reply = await in_activity(poster, lambda: ScriptedProvider().write(request))
        await poster.aclose()
        assert reply.text == text
        said.append([chunk.text for chunk in app.chunks()])
    pieces = ["Paris: ", "2.1 ", "million ", "people,\n  ", "on ", "the ", "Seine. "]
    assert said == [pieces, pieces]


def test_chunks_added_at_once_go_in_one_post_and_later_ones_in_the_next_in_order() -> None:
    async def scenario() -> list[list[int]]:
        app = WebApp()
        poster = poster_for(app, flush_seconds=0.01)
        for seq in range(450):
            poster.add(TokenChunk(stream="r", call="c", seq=seq, text="x"))
        await poster.flushed(WAIT_SECONDS)
        for seq in range(450, 460):
            poster.add(TokenChunk(stream="r", call="c", seq=seq, text="y"))
        await poster.aclose()
        return [[chunk.seq for chunk in batch.chunks] for batch in app.batches]

    batches = asyncio.run(scenario())
    assert batches == [list(range(450)), list(range(450, 460))]


@pytest.mark.parametrize("url", ["127.0.0.1:8765", "ftp://host", "http://"])
def test_a_web_url_that_is_no_http_url_is_refused_naming_the_variable(url: str) -> None:
    with pytest.raises(SettingsError, match="HARNESS_WEB_URL"):
        TokenPoster.from_environment({"HARNESS_WEB_URL": url})


def test_a_web_url_and_token_make_a_poster_that_sends_the_token() -> None:
    env: dict[str, Any] = {"HARNESS_WEB_URL": "http://127.0.0.1:8765/", "HARNESS_WEB_TOKEN": "t"}
    poster = TokenPoster.from_environment(env)
    assert poster is not None and poster.url == "http://127.0.0.1:8765" + TOKENS_PATH
