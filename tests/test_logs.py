"""A worker's log off a terminal is JSON, every line of it, with one meaning per key: a cities
run, a run that replans (Atlantis) and a run that halts, worked by a real `python -m worker`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.client import Client

from durable_harness._client.run_results import result_of
from harness.core.errors import ErrorCode
from harness.engine.run import RunPhase, RunRequest
from tests.factories import collect, node, synthetic_plan
from tests.payment_service import temporal_environment
from workflows import AgentRunWorkflow

pytestmark = pytest.mark.requires_local_server("a worker process in real time")


async def test_a_workers_log_is_all_json_lines_with_one_meaning_per_key(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    log_file = tmp_path / "worker.log"
    env = {**os.environ, **temporal_environment(client), "HARNESS_TASK_QUEUE": task_queue}
    with log_file.open("wb") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "worker"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        halting = synthetic_plan(
            node("stop", "fail", code=ErrorCode.POLICY_VIOLATION.value), collect("end", ["stop"])
        )
        requests = [
            RunRequest(goal="Compare Paris and Tokyo"),
            RunRequest(goal="Compare Paris, Atlantis and Tokyo"),
            RunRequest(goal="halt", scenario="synthetic", plan=halting),
        ]
        try:
            results = []
            for n, request in enumerate(requests):
                handle = await client.start_workflow(
                    AgentRunWorkflow.run, request, id=f"log-{n}-{tmp_path.name}"[:60],
                    task_queue=task_queue,
                )  # fmt: skip
                results.append(await result_of(client, handle))
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=30)
    lines = [line for line in log_file.read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    assert [r.status for r in results] == [
        RunPhase.SUCCEEDED,
        RunPhase.SUCCEEDED,
        RunPhase.FAILED_EXECUTION,
    ]
    run_ids = {r.run_id for r in results}
    assert {r["run_id"] for r in records if "run_id" in r} <= run_ids
    assert not any("attempt" in r for r in records), "attempt is the trace's; logs say which"
    calls = [r for r in records if r.get("event") == "tool.call"]
    assert {c["status"] for c in calls} == {"DONE", "FAILED"}
    assert all({"node_id", "tool", "activity_attempt"} <= set(c) for c in calls)
    assert "Traceback" not in log_file.read_text()
