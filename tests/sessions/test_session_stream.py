"""Following live (issue 39): `harness web` in this process on a free port, a real worker whose
environment points it there (HARNESS_WEB_URL), and each SDK provider against its fake API
streaming a reply in many chunks. A session's follower gets the reply token by token, in order,
before the reply itself; a run's writer tokens reach the run's followers at the hub, and the
planner's and judge's JSON does not."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2 as httpx
import pytest
import uvicorn
from temporalio.client import Client

from durable_harness.client import Harness
from harness.engine.live_tokens import TokenChunk
from harness.engine.run import RunPhase
from harness.engine.sessions import SessionStatus, session_workflow_id
from starter.web.app import create_app
from starter.web.context import WebConfig, WebContext
from tests.fakes import FakeApi, FakeServer, Recorded, Reply, Responder, Usage
from tests.providers.script import CitiesScript
from tests.providers.support import APIS, build_provider
from tests.sessions.test_sessions import _harness
from tests.support import running_worker

ANSWER = (
    "Paris sits on the Seine. It has about two million people, and its oldest bridge, "
    "the Pont Neuf, is in fact the oldest one still standing in the city."
)
GOAL = "Compare Paris and Tokyo"
WAIT_SECONDS = 120.0
"""Generous: a loaded 2-core machine runs the worker, the server and the fakes."""


@pytest.fixture(params=sorted(APIS))
def api(request: pytest.FixtureRequest) -> FakeApi:
    return APIS[request.param]


@asynccontextmanager
async def web_app(harness: Harness) -> AsyncIterator[tuple[str, WebContext]]:
    """`harness web`'s app served by uvicorn on a free port of 127.0.0.1, in this loop."""
    context = WebContext(harness=harness, config=WebConfig())
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    config = uvicorn.Config(
        create_app(context), log_level="warning", lifespan="off", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    async with asyncio.timeout(WAIT_SECONDS):
        while not server.started:
            await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", context
    finally:
        server.should_exit = True
        await serving
        listening.close()


@dataclass
class SseEvent:
    event: str
    data: str
    id: str | None = None


@dataclass
class Follower:
    """An SSE client of one stream: every event, in arrival order."""

    events: list[SseEvent] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def follow(self, url: str, last_event_id: str | None = None) -> None:
        """Until the stream ends."""
        headers = {"last-event-id": last_event_id} if last_event_id else {}
        async with (
            httpx.AsyncClient(timeout=httpx.Timeout(WAIT_SECONDS)) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            assert response.status_code == 200, await response.aread()
            fields: dict[str, str] = {}
            async for line in response.aiter_lines():
                if line.startswith(":"):
                    continue
                if line:
                    name, _, value = line.partition(":")
                    fields[name] = value.removeprefix(" ")
                    continue
                if fields:
                    self.events.append(
                        SseEvent(fields.get("event", "message"), fields["data"], fields.get("id"))
                    )
                    self.arrived.set()
                    fields = {}

    async def until(self, found: str, epoch: int) -> int:
        """The index of the `found` event of slice `epoch`, once it has arrived."""
        async with asyncio.timeout(WAIT_SECONDS):
            while True:
                for index, event in enumerate(self.events):
                    if event.event == found and json.loads(event.data).get("epoch") == epoch:
                        return index
                self.arrived.clear()
                await self.arrived.wait()


def streamed(text: str, api: FakeApi) -> Responder:
    """`text` as the model's reply, streamed in 5-character chunks, a little apart."""
    reply = api.text_reply(text, Usage(60, 40))

    def paced(request: Recorded) -> Reply:
        return dataclasses.replace(reply(request), chunk_chars=5, pause=0.01)

    return paced


async def test_a_streamed_session_reply_arrives_token_by_token_from_the_fake_providers(
    client: Client, task_queue: str, api: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = f"live-{api.name}"
    start: dict[str, Any] = {"scenario": "synthetic", "tools": ["echo"]}
    harness = _harness(client, task_queue)
    with FakeServer(api.route) as fake:
        fake.fallback = streamed(ANSWER, api)
        provider = build_provider(api, api.base_url(fake.url))
        async with web_app(harness) as (url, _):
            monkeypatch.setenv("HARNESS_WEB_URL", url)
            async with running_worker(client, task_queue, provider):
                first = await harness.send(session, "Hello.", **start)
                follower = Follower()
                following = asyncio.create_task(follower.follow(f"{url}/sessions/{session}/events"))
                await follower.until("reply", epoch=1)  # the state so far, on connecting
                second = await harness.send(session, "Tell me about Paris.", **start)
                at_reply = await follower.until("reply", epoch=2)
                following.cancel()
    assert first.status is SessionStatus.DONE and second.status is SessionStatus.DONE
    assert second.answer is not None and ANSWER in second.answer
    events = follower.events
    kinds = [e.event for e in events]
    message = next(e for e in events if e.event == "message" and '"messages": 2' in e.data)
    assert json.loads(message.data)["text"] == "Tell me about Paris."
    began = next(n for n, e in enumerate(events) if e.event == "slice" and '"epoch": 2' in e.data)
    # the message and its slice, then the reply's tokens, then the reply
    assert events.index(message) < began < kinds.index("token", began) < at_reply
    tokens = [
        TokenChunk.model_validate_json(e.data) for e in events[began:at_reply] if e.event == "token"
    ]
    assert len(tokens) >= 10  # token by token, not the whole reply at once
    assert "".join(chunk.text for chunk in tokens) == ANSWER
    assert [chunk.seq for chunk in tokens] == list(range(len(tokens)))
    assert {chunk.stream for chunk in tokens} == {session_workflow_id("default", session)}
    assert all(e.id is None for e in events if e.event == "token")
    marks = [e.id for e in events if e.event != "token"]
    assert marks == sorted(marks, key=lambda mark: tuple(map(int, str(mark).split("."))))
    assert len(set(marks)) == len(marks)


async def test_a_runs_writer_tokens_reach_its_followers_and_the_planners_and_judges_do_not(
    client: Client, task_queue: str, api: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = CitiesScript(api, GOAL)

    def paced(request: Recorded) -> Reply:
        return dataclasses.replace(script(request), chunk_chars=4)

    harness = _harness(client, task_queue)
    with FakeServer(api.route) as fake:
        fake.fallback = paced
        provider = build_provider(api, api.base_url(fake.url))
        async with web_app(harness) as (url, context):
            monkeypatch.setenv("HARNESS_WEB_URL", url)
            async with running_worker(client, task_queue, provider):
                run = await harness.start(GOAL, scenario="cities", run_id=f"live-run-{api.name}")
                chunks: list[TokenChunk] = []
                async with context.hub.follow(run.run_id) as queue:
                    result = await run.result()
                    while not queue.empty():
                        chunks.append(queue.get_nowait())
    assert result.status is RunPhase.SUCCEEDED, result.error
    replies: dict[tuple[str | None, str], list[TokenChunk]] = {}
    for chunk in chunks:
        replies.setdefault((chunk.node, chunk.call), []).append(chunk)
    said = {node: "".join(c.text for c in reply) for (node, _), reply in replies.items()}
    assert result.report is not None and said.get("report") == result.report.strip()
    assert len(replies[next(key for key in replies if key[0] == "report")]) > 5
    texts = " ".join(said.values())
    assert "passed" not in texts and '"nodes"' not in texts  # no verdict, no plan
    for reply in replies.values():
        assert [chunk.seq for chunk in reply] == list(range(len(reply)))


async def test_a_reconnect_after_its_last_event_id_gets_nothing_twice_and_the_stream_ends_with_it(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = "live-resumed"
    start: dict[str, Any] = {"scenario": "synthetic", "tools": ["echo"]}
    harness = _harness(client, task_queue)
    async with web_app(harness) as (url, _), httpx.AsyncClient() as web:
        monkeypatch.setenv("HARNESS_WEB_URL", url)
        async with running_worker(client, task_queue):  # the offline provider
            unknown = await web.get(f"{url}/sessions/nobody/events")
            await harness.send(session, "Find the code. value: 42", **start)
            events = f"{url}/sessions/{session}/events"
            bad_id = await web.get(events, headers={"last-event-id": "latest"})
            first = Follower()
            following = asyncio.create_task(first.follow(events))
            await first.until("reply", epoch=1)
            following.cancel()
            resumed_from = [e.id for e in first.events if e.id][-1]
            await harness.send(session, "Now the code again. value: 43", **start)
            again = Follower()
            following = asyncio.create_task(again.follow(events, last_event_id=resumed_from))
            await again.until("reply", epoch=2)
            await client.get_workflow_handle(session_workflow_id("default", session)).terminate()
            async with asyncio.timeout(WAIT_SECONDS):
                await following  # the stream ends when the session does
    assert unknown.status_code == 404
    assert unknown.json() == {"error": "no session 'nobody' in scope 'default'"}
    assert bad_id.status_code == 400 and "Last-Event-ID" in bad_id.json()["error"]
    assert resumed_from == "1.1.2"
    assert [(e.event, e.id) for e in again.events if e.event != "token"] == [
        ("message", "2.1.2"),
        ("slice", "2.2.1"),
        ("reply", "2.2.2"),
        ("end", None),
    ]
    assert json.loads(again.events[-1].data) == {"status": "TERMINATED"}
