"""A wide run's result reads as JSON in the Temporal UI of `harness server` (and of `make demo`,
which starts the same dev server and codec server): the UI is given the codec server's address,
and the codec server decodes the compressed result the run's history holds."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToJson
from temporalio.api.common.v1 import Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from harness.engine.run import RunPhase, RunRequest
from infra.client import connect
from infra.converter import ENCODING
from infra.settings import Settings
from starter.servers.codec_server import codec_answers
from starter.servers.ui_screenshot import CHROMIUM, CHROMIUM_FLAGS
from tests.factories import collect, node, synthetic_plan
from tests.payment_service import free_port
from tests.starter.test_server_command import HARNESS
from tests.support import execute_run, history_events, running_worker

WIDTH = 300
VALUE = "readable-{}-" + "x" * 1_000
"""Each node's value: 300 of them make a result over 128 KB, which the codec compresses."""


@asynccontextmanager
async def harness_server(
    tmp_path: Path, codec_port: int | None = None
) -> AsyncIterator[tuple[Client, str, int]]:
    """`harness server` on free ports (its codec server's: `codec_port`, else a free one);
    yields a client, the UI's address and the codec's port."""
    port, ui_port = free_port(), free_port()
    codec_port = codec_port or free_port()
    process = await asyncio.create_subprocess_exec(
        HARNESS, "server", "--port", str(port), "--ui-port", str(ui_port),
        "--codec-port", str(codec_port), "--db", str(tmp_path / "temporal.db"),
        env={**os.environ, "TEMPORAL_ADDRESS": f"127.0.0.1:{port}"},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        client = None
        for _ in range(240):
            try:
                client = await connect(Settings(temporal_address=f"127.0.0.1:{port}"))
                await client.count_workflows()
                break
            except Exception:
                await asyncio.sleep(0.5)
        assert client is not None, "harness server did not come up"
        yield client, f"http://127.0.0.1:{ui_port}", codec_port
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), timeout=60)


def get_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=10) as response:
        document: dict[str, object] = json.loads(response.read())
    return document


def decode(codec_port: int, payloads: Payloads, origin: str) -> tuple[list[dict[str, str]], str]:
    """The codec server's /decode, as the UI's page calls it: the payloads and the CORS origin."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{codec_port}/decode",
        data=MessageToJson(payloads).encode(),
        headers={"Content-Type": "application/json", "Origin": origin},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.loads(response.read())
        allowed = response.headers["Access-Control-Allow-Origin"]
    return body["payloads"], allowed


async def wait_for_ui(ui: str) -> dict[str, object]:
    for _ in range(120):
        try:
            return await asyncio.to_thread(get_json, f"{ui}/api/v1/settings")
        except OSError:
            await asyncio.sleep(0.5)
    raise AssertionError(f"the UI did not answer at {ui}")


def wide_request() -> RunRequest:
    leaves = [node(f"n{i}", "delay", ms=0, value=VALUE.format(i)) for i in range(WIDTH)]
    plan = synthetic_plan(*leaves, collect("final", [leaf.id for leaf in leaves]))
    return RunRequest(goal="a wide run", scenario="synthetic", plan=plan)


@pytest.mark.requires_local_server("harness server starts a dev server with its UI")
async def test_a_300_node_result_is_decoded_for_the_ui_of_harness_server(tmp_path: Path) -> None:
    async with harness_server(tmp_path) as (client, ui, codec_port):
        settings = await wait_for_ui(ui)
        codec = settings["Codec"]
        assert isinstance(codec, dict)
        assert codec["Endpoint"] == f"http://127.0.0.1:{codec_port}"
        async with running_worker(client, "ui-codec"):
            result = await execute_run(client, "ui-codec", wide_request())
        assert result.status is RunPhase.SUCCEEDED, result.error
        events = await history_events(client, result.run_id)
        completed = next(
            event for event in events
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
        )  # fmt: skip
        payloads = completed.workflow_execution_completed_event_attributes.result
        assert payloads.payloads[0].metadata["encoding"] == ENCODING  # unreadable as it is
        decoded, allowed = await asyncio.to_thread(decode, codec_port, payloads, ui)
        assert allowed == ui
        document = json.loads(base64_data(decoded[0]))
        assert document["status"] == "SUCCEEDED"
        assert VALUE.format(WIDTH - 1) in json.dumps(document)
        if importlib.util.find_spec("playwright") is not None and CHROMIUM.exists():
            page_text = await asyncio.to_thread(
                result_text_in_ui, f"{ui}/namespaces/default/workflows/{result.run_id}"
            )
            assert "SUCCEEDED" in page_text  # the result's own status, decoded on the page


def base64_data(payload: dict[str, str]) -> bytes:
    return base64.b64decode(payload["data"])


def result_text_in_ui(url: str) -> str:
    """The text of the run's page once the UI shows its decoded result ('' if it never does)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.goto(url)
            for _ in range(120):
                texts = [frame.content() for frame in page.frames]
                found = [text for text in texts if "readable-" in text and "SUCCEEDED" in text]
                if found:
                    return found[0]
                page.wait_for_timeout(500)
            page.screenshot(path="/tmp/ui-codec-failed.png", full_page=True)
            return ""
        finally:
            browser.close()


@pytest.mark.requires_local_server("harness server starts a dev server with its UI")
async def test_harness_server_points_its_ui_at_a_codec_server_already_on_its_port(
    tmp_path: Path,
) -> None:
    codec_port = free_port()
    codec = subprocess.Popen(
        [sys.executable, "-m", "starter.servers.codec_server", "--port", str(codec_port)]
    )
    try:
        while not await asyncio.to_thread(codec_answers, codec_port):
            assert codec.poll() is None
            await asyncio.sleep(0.2)
        async with harness_server(tmp_path, codec_port) as (_, ui, _):
            settings = await wait_for_ui(ui)  # the server came up: no refusal of the port
            codec_setting = settings["Codec"]
            assert isinstance(codec_setting, dict)
            assert codec_setting["Endpoint"] == f"http://127.0.0.1:{codec_port}"
    finally:
        codec.terminate()
        codec.wait(timeout=20)
