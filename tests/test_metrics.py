"""Per-tool metrics: a worker with a metrics address serves Prometheus metrics in which each
tool call is counted and timed under its tool's name, beside the SDK's own metrics."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.request
import uuid

import pytest
from temporalio.client import Client

from activities.llm import ProviderRegistry, ScriptedProvider
from durable_harness._client.run_results import result_of
from harness.engine.run import RunPhase, RunRequest
from infra.client import connect
from infra.settings import Settings, SettingsError
from tests.payment_service import free_port
from worker.app import build_worker
from workflows import AgentRunWorkflow


def scrape(address: str) -> list[str]:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as response:
        text: str = response.read().decode()
    return text.splitlines()


def series(lines: list[str], name: str, **labels: str) -> list[str]:
    wanted = [f'{key}="{value}"' for key, value in labels.items()]
    return [
        line
        for line in lines
        if line.startswith(name + "{") and all(label in line for label in wanted)
    ]


async def test_each_tool_is_counted_and_timed_under_its_own_name(
    client: Client, task_queue: str
) -> None:
    address = f"127.0.0.1:{free_port()}"
    settings = Settings(
        temporal_address=client.service_client.config.target_host,
        temporal_namespace=client.namespace,
        metrics_address=address,
    )
    metered = await connect(settings, metrics=True)
    registry = ProviderRegistry.always(ScriptedProvider())
    async with build_worker(metered, task_queue, registry):
        handle = await metered.start_workflow(
            AgentRunWorkflow.run,
            RunRequest(goal="Compare Paris, Atlantis and Tokyo"),
            id=f"test-{uuid.uuid4().hex[:10]}",
            task_queue=task_queue,
        )
        result = await result_of(metered, handle)
        assert result.status is RunPhase.SUCCEEDED
        await asyncio.sleep(0.2)
        lines = scrape(address)
    done = series(lines, "harness_tool_calls", tool="get_population", status="DONE")
    failed = series(lines, "harness_tool_calls", tool="get_population", error_code="MISSING_INFO")
    assert done and failed, [line for line in lines if line.startswith("harness_")]
    assert float(failed[0].rsplit(" ", 1)[1]) == 1  # Atlantis, once
    assert series(lines, "harness_tool_latency_bucket", tool="summarize_city")
    assert series(lines, "temporal_activity_execution_latency_bucket")  # the SDK's own


def test_a_metrics_address_that_is_not_host_and_port_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HARNESS_METRICS_ADDRESS", "9464")
    with pytest.raises(SettingsError, match="HARNESS_METRICS_ADDRESS='9464' is not HOST:PORT"):
        Settings.from_env()


def test_a_worker_given_a_bad_metrics_address_exits_2_with_one_line_naming_it() -> None:
    env = {**os.environ, "HARNESS_METRICS_ADDRESS": "localhost", "TEMPORAL_ADDRESS": "127.0.0.1:1"}
    done = subprocess.run(
        [sys.executable, "-m", "worker"], env=env, capture_output=True, text=True, timeout=60
    )
    output = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 2
    assert len(output) == 1 and "Traceback" not in output[0]
    assert json.loads(output[0])["error"].startswith("HARNESS_METRICS_ADDRESS='localhost'")
