"""Temporal tells the truth: a failed, a budget-exhausted and a cancelled run show Failed, Failed
and Canceled to `temporal workflow list --query`, a run that succeeded shows Completed, and the
CLI still gives the RunResult of each."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from harness.engine.run import RunPhase
from starter.servers.dev_server import temporal_binary
from tests.factories import collect, delay, synthetic_plan
from tests.starter.test_cli import harness
from tests.support import running_worker

pytestmark = pytest.mark.requires_local_server("the CLI starts runs with search attributes")


async def listed(client: Client, query: str) -> set[str]:
    """Run ids `temporal workflow list --query` finds (visibility is eventually consistent)."""
    found: set[str] = set()
    for _ in range(50):
        process = await asyncio.create_subprocess_exec(
            temporal_binary(), "workflow", "list", "--output", "json",
            "--address", client.service_client.config.target_host, "--query", query,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await process.communicate()
        assert process.returncode == 0, err.decode()
        rows = json.loads(out or b"[]")
        found = {row["execution"]["workflowId"] for row in rows}
        if found:
            return found
        await asyncio.sleep(0.1)
    return found


async def test_each_ending_shows_its_own_status_in_temporal_and_keeps_its_result(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    tag = f"st{uuid.uuid4().hex[:6]}"
    ids = {name: f"{tag}-{name}" for name in ("ok", "failed", "budget", "cancelled")}
    long_plan = synthetic_plan(delay("long", 600_000), collect("end", ["long"]))
    plan_file = str(tmp_path / "long.json")
    (tmp_path / "long.json").write_text(long_plan.model_dump_json())
    async with running_worker(client, task_queue):
        ok = await harness("run", "Compare Paris and Tokyo", "--id", ids["ok"], "--json",
                           client=client, task_queue=task_queue)  # fmt: skip
        failed = await harness("run", "Compare some cities", "--no-ask", "--id", ids["failed"],
                               "--json", client=client, task_queue=task_queue)  # fmt: skip
        budget = await harness("run", "Compare Paris and Tokyo", "--max-tool-calls", "1",
                               "--id", ids["budget"], "--json",
                               client=client, task_queue=task_queue)  # fmt: skip
        started = await harness("run", "wait", "--scenario", "synthetic", "--plan", plan_file,
                                "--id", ids["cancelled"], "--no-wait",
                                client=client, task_queue=task_queue)  # fmt: skip
        assert started[0] == 0, started
        await asyncio.sleep(1.0)
        cancel = await harness(
            "cancel", ids["cancelled"], "--reason", "not needed", "--actor", "human:ops",
            client=client, task_queue=task_queue,
        )  # fmt: skip
        handle = client.get_workflow_handle(ids["cancelled"])
        for _ in range(100):
            if (await handle.describe()).status is not WorkflowExecutionStatus.RUNNING:
                break
            await asyncio.sleep(0.1)
        status = await harness("status", ids["cancelled"], "--json",
                               client=client, task_queue=task_queue)  # fmt: skip
        ours = f'WorkflowId STARTS_WITH "{tag}-"'
        failed_list = await listed(client, f'ExecutionStatus="Failed" AND {ours}')
        canceled_list = await listed(client, f'ExecutionStatus="Canceled" AND {ours}')
        completed_list = await listed(client, f'ExecutionStatus="Completed" AND {ours}')
    assert (ok[0], json.loads(ok[1])["status"]) == (0, "SUCCEEDED")
    assert (failed[0], json.loads(failed[1])["status"]) == (1, "FAILED_VALIDATION")
    assert (budget[0], json.loads(budget[1])["status"]) == (1, "BUDGET_EXHAUSTED")
    assert cancel[0] == 0, cancel
    cancelled = json.loads(status[1])
    assert cancelled["status"] == RunPhase.CANCELLED.value
    assert "not needed (by human:ops)" in (cancelled["error"] or "")
    assert failed_list == {ids["failed"], ids["budget"]}
    assert canceled_list == {ids["cancelled"]}
    assert completed_list == {ids["ok"]}
