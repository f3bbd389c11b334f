"""Eager activity dispatch: where the server allows it, a run's tool calls reach the worker in the
answer to the workflow task that scheduled them, never through the server's task queue.

Each test starts a dev server of its own with its metrics on a free port: matching records the
schedule-to-start latency of every activity task it hands out (`RecordActivityTaskStarted`), so
the count of those on the run's task queue is the number of calls that went the long way.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from harness.engine.run import RunPhase, RunRequest
from infra.plugin import HarnessPlugin
from starter.servers.dev_server import temporal_binary
from tests.factories import node, ref, synthetic_plan
from tests.support import execute_run, running_worker

STEPS = 6
CALLS = STEPS + 1  # and the final node
SCRAPE_SECONDS = 20.0
COUNT = re.compile(
    r'^(?P<name>\w+)_count\{[^}]*operation="(?P<operation>\w+)"[^}]*taskqueue="(?P<queue>[^"]+)"'
    r"[^}]*\} (?P<count>\S+)$"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def _server(*extra: str) -> AsyncIterator[tuple[Client, int]]:
    metrics = _free_port()
    environment = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        plugins=[HarnessPlugin()],
        dev_server_log_level="error",
        dev_server_startup_timeout=timedelta(seconds=60),
        dev_server_extra_args=["--metrics-port", str(metrics), *extra],
    )
    async with environment:
        yield environment.client, metrics


async def _matched_activity_tasks(metrics_port: int, task_queue: str) -> int:
    """How many of the run's tool calls matching handed out, read once the server's metrics
    show them all completed (the server publishes its metrics every few seconds)."""
    deadline = time.monotonic() + SCRAPE_SECONDS
    while True:
        counts = _counts(metrics_port, task_queue)
        if counts.get("activity_end_to_end_latency", 0) >= CALLS or time.monotonic() > deadline:
            return counts.get("task_schedule_to_start_latency", 0)
        await asyncio.sleep(0.5)


def _counts(metrics_port: int, task_queue: str) -> dict[str, int]:
    """Completed activity tasks (history) and those matching handed out, on `task_queue`."""
    wanted = {
        "activity_end_to_end_latency": "RespondActivityTaskCompleted",
        "task_schedule_to_start_latency": "RecordActivityTaskStarted",
    }
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics") as response:
        text = response.read().decode()
    label = task_queue.replace("-", "_")  # as the server's metrics spell it
    counts: dict[str, int] = {}
    for line in text.splitlines():
        match = COUNT.match(line)
        if match and match["queue"] == label and wanted.get(match["name"]) == match["operation"]:
            counts[match["name"]] = counts.get(match["name"], 0) + int(float(match["count"]))
    return counts


async def _chain_run(client: Client) -> str:
    """A run of STEPS zero-latency tool calls one after another; its task queue."""
    task_queue = f"tq-{uuid.uuid4().hex[:10]}"
    steps = [node("c0", "delay", ms=0, value=0)]
    for index in range(1, STEPS):
        steps.append(node(f"c{index}", "delay", ms=0, value=index, deps=[f"c{index - 1}"]))
    final = node("final", "collect", ref("inputs", f"c{STEPS - 1}"), deps=[f"c{STEPS - 1}"])
    request = RunRequest(goal="chain", scenario="synthetic", plan=synthetic_plan(*steps, final))
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    return task_queue


async def test_tool_calls_are_dispatched_eagerly_where_the_server_allows_it() -> None:
    async with _server() as (client, metrics):  # the dev server allows it by default
        task_queue = await _chain_run(client)
        assert await _matched_activity_tasks(metrics, task_queue) == 0


async def test_a_server_that_refuses_eager_dispatch_hands_out_every_tool_call_itself() -> None:
    refuse = ("--dynamic-config-value", "system.enableActivityEagerExecution=false")
    async with _server(*refuse) as (client, metrics):
        task_queue = await _chain_run(client)
        assert await _matched_activity_tasks(metrics, task_queue) >= CALLS
