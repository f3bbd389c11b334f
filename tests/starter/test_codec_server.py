"""The codec server shows the harness's compressed payloads to the real `temporal` CLI."""

from __future__ import annotations

import asyncio
import subprocess

import pytest
from temporalio.client import Client

from harness.engine.run import RunPhase, RunRequest
from starter.servers.dev_server import temporal_binary
from tests.factories import collect, node, synthetic_plan
from tests.payment_service import free_port
from tests.starter.test_cli import HARNESS
from tests.support import execute_run, running_worker

pytestmark = pytest.mark.requires_local_server("the temporal CLI talks to a local server")

BIG = "x" * 200_000
"""A result this large is compressed by the harness's codec (over 128 KB)."""


async def temporal(client: Client, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        temporal_binary(), *args, "--address", client.service_client.config.target_host,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_the_codec_server_decodes_a_compressed_result_for_the_temporal_cli(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(node("big", "delay", ms=0, value=BIG), collect("final", ["big"]))
    async with running_worker(client, task_queue):
        result = await execute_run(
            client, task_queue, RunRequest(goal="big", scenario="synthetic", plan=plan)
        )
    assert result.status is RunPhase.SUCCEEDED, result.error
    port = free_port()
    server = subprocess.Popen(
        [HARNESS, "codec-server", "--port", str(port)], stderr=subprocess.PIPE
    )
    try:
        await asyncio.sleep(1.5)
        raw = await temporal(client, "workflow", "result", "-w", result.run_id)
        decoded = await temporal(
            client, "workflow", "result", "-w", result.run_id,
            "--codec-endpoint", f"http://127.0.0.1:{port}",
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert BIG not in raw and "binary/zlib" in raw
    assert BIG in decoded and '"status": "SUCCEEDED"' in decoded.replace('":"', '": "')
    assert server.returncode == 0
