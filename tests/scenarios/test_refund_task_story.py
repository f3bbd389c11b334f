"""The refunds story on a task, from the CLI: the run records the lookups as evidence, the fact
that the order is eligible supported by the policy evidence, the approval and the payment; the
task's context shows all of it after the worker that did it is gone."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from durable_harness._client import tasks
from tests.payment_service import PaymentService, payment_service
from tests.scenarios.test_refund_runs import refunds_worker
from tests.starter.test_cli import harness
from workflows import AgentRunWorkflow

pytestmark = pytest.mark.requires_local_server(
    "the payment service reports in real time; tasks are listed by search attributes"
)

GOAL = "Refund order A-3001, the customer received a damaged item"  # docs/tasks.md's order


@pytest.fixture
async def service(client: Client, tmp_path: Path) -> AsyncIterator[PaymentService]:
    async with payment_service(client, tmp_path) as running:
        yield running


async def test_a_refund_on_a_task_leaves_evidence_a_supported_fact_and_the_approval(
    client: Client, task_queue: str, service: PaymentService
) -> None:
    scope = f"shop-{uuid.uuid4().hex[:6]}"
    run_id = f"refund-{uuid.uuid4().hex[:8]}"

    async def cli(*args: str) -> tuple[int, str, str]:
        return await harness(*args, client=client, task_queue=task_queue)

    async with refunds_worker(client, task_queue, service):
        code, out, err = await cli(
            "task", "create", "Refund investigation for order A-3001", "--scope", scope,
            "--actor", "human:ops",
        )  # fmt: skip
        assert code == 0, err
        task = out.split(":")[0]
        code, _, err = await cli(
            "run", GOAL, "--scenario", "refunds", "--task", task, "--scope", scope,
            "--id", run_id, "--no-wait",
        )  # fmt: skip
        assert code == 0, err
        handle = client.get_workflow_handle(run_id)
        for _ in range(200):
            waits = await handle.query(AgentRunWorkflow.waits)
            if any(w.id == "approve-refund" and w.status.value == "PENDING" for w in waits):
                break
            await asyncio.sleep(0.1)
        code, _, err = await cli("approve", run_id, "approve-refund", "--actor", "human:ops")
        assert code == 0, err
        code, _, err = await cli("status", run_id)
        for _ in range(200):
            state = await tasks.ledger(client, scope, task)
            if state.task.runs and state.task.runs[0].ended:
                break
            await asyncio.sleep(0.1)
    async with refunds_worker(client, task_queue, service):  # another worker: the task answers
        code, out, err = await cli("context", task, "--scope", scope, "--json")
        by_agent = await cli(
            "review", task, "sub-1", "--approve", "--scope", scope, "--actor", "agent:planner"
        )
        early = await cli("task", "complete", task, "--scope", scope, "--actor", "human:ops")
        approve = await cli(
            "review", task, "sub-1", "--approve", "--scope", scope, "--actor", "human:ops-lead"
        )
        done = await cli("task", "complete", task, "--scope", scope, "--actor", "human:ops")
    assert code == 0, err
    context: dict[str, Any] = json.loads(out)
    evidence = {e["node_id"]: e for e in context["recent_evidence"] if e["kind"] == "TOOL"}
    assert {"order", "policy", "dispute", "refund", "report"} <= set(evidence)
    (fact,) = context["valid_facts"]
    assert fact["statement"] == "order A-3001 is eligible for a refund"
    assert fact["recorded_by"] == f"agent:{run_id}"
    supports = [
        r
        for r in context["relations"]
        if r["type"] == "SUPPORTS" and r["target"] == {"kind": "FACT", "id": fact["id"]}
    ]
    assert [r["source"]["id"] for r in supports] == [evidence["policy"]["id"]]
    approvals = [e for e in context["recent_evidence"] if e["kind"] == "EXTERNAL"]
    assert [e["summary"] for e in approvals] == ["approval approve-refund: approved by human:ops"]
    assert evidence["refund"]["content_ref"] == f"run:{run_id}/node:refund"
    assert context["task"]["runs"][0]["ended"] == "SUCCEEDED"
    # the run submitted instead of declaring the task done; the review and gates decide
    (submission,) = context["submissions"]
    assert submission["submitted_by"] == "system:harness"
    assert evidence["policy"]["id"] in submission["evidence_ids"]
    assert context["task"]["status"] == "IN_REVIEW"
    assert by_agent[0] == 2 and "an agent can never review" in by_agent[2]
    assert early[0] == 1 and "FAIL  approved-review" in early[1]
    assert approve[0] == 0
    assert done[0] == 0 and "PASS  completion-evidence" in done[1]
    assert len(await service.payments("A-3001")) == 1
