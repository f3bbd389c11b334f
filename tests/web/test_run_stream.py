"""`harness web`'s run stream over HTTP, against a real dev server and worker: every trace event
once, in order, its index in the run's trace as its id; a reconnect resumes after the last id
it read; the stream closes at the run's end; tokens and progress go out of band (no id); and
what the app refuses, it refuses in one line."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from temporalio.client import Client

from durable_harness.client import Harness
from harness.engine.trace import TraceKind
from tests.docs_pages import block_after, page
from tests.support import running_worker
from tests.web.web_server import Message, harness_web, messages, read_stream

pytestmark = pytest.mark.requires_local_server("runs start with the Harness* search attributes")

COMPARE = {"goal": "Compare Paris and Tokyo", "scenario": "cities"}


async def start_a_run_that_asks(http: httpx2.AsyncClient) -> str:
    """A cities goal that names no city: the run asks which, and waits."""
    started = await http.post("/runs", json={"goal": "Compare", "scenario": "cities"})
    run_id: str = started.json()["run_id"]
    return run_id


def trace_ids(stream: list[Message]) -> list[int]:
    return [int(m.id) for m in stream if m.event == "trace" and m.id is not None]


async def test_a_runs_stream_carries_each_trace_event_once_by_its_index_and_ends_with_the_run(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with (
        running_worker(client, task_queue),
        harness_web(client, task_queue, tmp_path) as web,
        httpx2.AsyncClient(base_url=web.url) as http,
    ):
        started = await http.post("/runs", json=COMPARE)
        assert started.status_code == 201, started.text
        run_id = started.json()["run_id"]
        stream = await read_stream(http, f"/runs/{run_id}/events")
        report = await http.get(f"/runs/{run_id}/report")
        plan = await http.get(f"/runs/{run_id}/plan")
        progress_page = await http.get(f"/runs/{run_id}")
    assert report.status_code == 200 and "Compare Paris and Tokyo" in report.text
    assert "pop_tokyo" in [node["id"] for node in plan.json()["plan"]["nodes"]]
    assert progress_page.status_code == 200 and "new EventSource" in progress_page.text
    trace = await (await Harness.connect(address=web_address(client))).run(run_id).trace()
    events = [m.json() for m in stream if m.event == "trace"]
    assert trace_ids(stream) == list(range(len(trace)))
    assert [event["kind"] for event in events] == [event.kind.value for event in trace]
    assert events[-1]["kind"] == TraceKind.RUN_FINISH and events[-1]["status"] == "SUCCEEDED"
    assert stream[-1].event == "end" and stream[-1].json() == {"next": len(trace), "error": None}
    progress = [m for m in stream if m.event == "progress"]
    assert progress and all(m.id is None for m in progress)
    assert progress[-1].json()["phase"] == "SUCCEEDED"


async def test_a_reconnect_resumes_after_its_last_event_id_and_tokens_come_without_an_id(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with (
        running_worker(client, task_queue),
        harness_web(client, task_queue, tmp_path) as web,
        httpx2.AsyncClient(base_url=web.url, timeout=120) as http,
    ):
        run_id = await start_a_run_that_asks(http)
        first: list[Message] = []
        async with http.stream("GET", f"/runs/{run_id}/events") as response:
            async for message in messages(response):
                first.append(message)
                if message.event == "progress" and message.json()["pending"]:
                    break
        chunk = {"stream": run_id, "node": None, "call": "c1", "seq": 0, "text": "Par"}
        async with http.stream(
            "GET", f"/runs/{run_id}/events", headers={"Last-Event-ID": str(trace_ids(first)[-1])}
        ) as response:
            resumed: list[Message] = []
            reader = messages(response)  # one reader: a break leaves it where it was
            async for message in reader:
                resumed.append(message)
                if message.event == "progress":  # the stream follows: a token reaches it
                    posted = await http.post("/internal/tokens", json={"chunks": [chunk]})
                    assert posted.is_success
                if message.event == "token":
                    break
            answered = await http.post(
                f"/runs/{run_id}/waits/question-1/answer", json={"text": "Paris and Tokyo"}
            )
            assert answered.status_code == 200 and answered.json()["accepted"], answered.text
            async for message in reader:
                resumed.append(message)
        after = await read_stream(http, f"/runs/{run_id}/events?after=2")
    read_first, read_then = trace_ids(first), trace_ids(resumed)
    assert read_first and read_then[0] == read_first[-1] + 1
    assert read_first + read_then == list(range(len(read_first) + len(read_then)))
    tokens = [m for m in resumed if m.event == "token"]
    assert [(m.id, m.json()["text"]) for m in tokens] == [(None, "Par")]
    assert resumed[-1].event == "end"
    assert trace_ids(after) == list(range(3, len(read_first) + len(read_then)))


async def test_a_stopped_harness_web_ends_its_streams_without_an_end_and_exits_0(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    """SIGTERM (or Ctrl-C): the run goes on, and a follower reconnects to the next server."""
    async with (
        running_worker(client, task_queue),
        harness_web(client, task_queue, tmp_path) as web,
        httpx2.AsyncClient(base_url=web.url, timeout=120) as http,
    ):
        run_id = await start_a_run_that_asks(http)  # the stream stays open
        read: list[Message] = []
        async with http.stream("GET", f"/runs/{run_id}/events") as response:
            reader = messages(response)
            async for message in reader:
                read.append(message)
                if message.event == "progress" and message.json()["pending"]:
                    break
            assert web.process is not None
            web.process.send_signal(signal.SIGTERM)
            read.extend([message async for message in reader])
            code = await asyncio.to_thread(web.process.wait, 60)
    assert code == 0
    assert read and all(message.event != "end" for message in read)


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl (apt-get install curl)")
async def test_the_docs_curl_commands_resume_after_the_event_id_they_name(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with (
        running_worker(client, task_queue),
        harness_web(client, task_queue, tmp_path) as web,
        httpx2.AsyncClient(base_url=web.url) as http,
    ):
        run_id = (await http.post("/runs", json=COMPARE)).json()["run_id"]
        whole = trace_ids(await read_stream(http, f"/runs/{run_id}/events"))  # to its end
        commands = block_after(page("web"), "### Resuming", "bash").strip().splitlines()
        shown = []
        for command in commands:
            line = command.split("#")[0].replace("http://127.0.0.1:8765", web.url)
            done = await asyncio.to_thread(
                subprocess.run,
                shlex.split(line.replace("RUN_ID", run_id)),
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            shown.append([int(text[4:]) for text in done.stdout.splitlines() if text[:4] == "id: "])
    assert len(commands) == 2 and len(whole) > 12
    assert shown == [whole[12:], whole[12:]]


async def test_with_a_token_a_request_without_it_is_401_and_with_it_an_unknown_run_is_404(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with (
        harness_web(client, task_queue, tmp_path, token="s3cret") as web,
        httpx2.AsyncClient(base_url=web.url) as http,
    ):
        refused = await http.get("/runs/no-such-run/events")
        unknown = await http.get("/runs/no-such-run/events", params={"token": "s3cret"})
        started = await http.post("/runs", json=COMPARE)
    assert refused.status_code == 401 and started.status_code == 401
    assert unknown.status_code == 404
    assert unknown.json() == {"error": "no run with id 'no-such-run'"}


async def test_bad_input_is_refused_in_one_line_before_anything_starts(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with (
        harness_web(client, task_queue, tmp_path) as web,
        httpx2.AsyncClient(base_url=web.url) as http,
    ):
        not_json = await http.post("/runs", content=b"{goal")
        no_goal = await http.post("/runs", json={"scenario": "cities"})
        unknown = await http.post("/runs", json={"goal": "x", "colour": "red"})
        out_of_range = await http.post("/runs", json={"goal": "x", "max_nodes": 0})
        agent = await http.post(
            "/runs/any-run/waits/approve-refund/approve", json={"actor": "agent:bot"}
        )
        bad_resume = await http.get("/runs/any-run/events", headers={"Last-Event-ID": "x"})
    for refused in (not_json, no_goal, unknown, out_of_range, agent, bad_resume):
        assert refused.status_code == 400, refused.text
        assert list(refused.json()) == ["error"] and "\n" not in refused.json()["error"]
    assert "colour" in unknown.json()["error"]
    assert agent.json()["error"] == "agent:bot is an agent; agents can never approve"


async def test_another_site_may_not_start_a_goal_and_a_rebound_name_gets_no_answer(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    """A page elsewhere cannot make its visitor's browser start runs or answer waits here, nor
    read a stream through a name of its own that resolves to 127.0.0.1 (DNS rebinding)."""
    async with (
        harness_web(client, task_queue, tmp_path) as web,
        httpx2.AsyncClient(base_url=web.url) as http,
    ):
        cross_site = await http.post(
            "/runs", json=COMPARE, headers={"Origin": "http://evil.example"}
        )
        rebound = await http.get("/runs/no-such-run/events", headers={"Host": "evil.example"})
        own_page = await http.post("/runs", json={"goal": ""}, headers={"Origin": web.url})
    assert cross_site.status_code == 403
    assert cross_site.json() == {
        "error": "a request from another site (http://evil.example) is refused"
    }
    assert rebound.status_code == 403 and "localhost only" in rebound.json()["error"]
    assert own_page.status_code == 400  # the app's own page is let through to the checks


def web_address(client: Client) -> str:
    return client.service_client.config.target_host


def test_a_host_beyond_loopback_without_a_token_is_refused_in_one_line_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "starter.cli.app", "web", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HARNESS_WEB_TOKEN": ""},
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "harness: --host 0.0.0.0 is reachable from other machines: give --token "
        "(or $HARNESS_WEB_TOKEN), or listen on 127.0.0.1"
    ]
