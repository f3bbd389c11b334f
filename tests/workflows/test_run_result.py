"""One place for a run's result: the run builds it once, as it ends, and holds it. The workflow
returns it (Completed), fails with it (Failed) or, Canceled, leaves it to be replayed; the result
query answers the same one, and every caller reads it through
`durable_harness._client.run_results`."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from durable_harness import RunFailed
from durable_harness._client.run_results import result_of
from durable_harness.client import Harness
from harness.engine.contracts import CANCEL_SIGNAL, RESULT_QUERY, RUN_WORKFLOW
from harness.engine.dag import NodeStatus
from harness.engine.run import RunPhase, RunRequest, RunResult
from harness.waits.deliveries import CancelRequest
from starter.errors import exit_code_of
from tests.factories import collect, delay, node, synthetic_plan
from tests.support import running_worker, start_run
from workflows import AgentRunWorkflow


async def _query_result(client: Client, run_id: str) -> RunResult:
    handle = client.get_workflow_handle(run_id)
    found: RunResult = await handle.query(RESULT_QUERY, result_type=RunResult)
    return found


async def test_a_run_the_cancel_signal_ended_answers_its_query_with_the_result_it_ended_with(
    client: Client, task_queue: str
) -> None:
    """Ended Canceled, a run carries no result: it is replayed from the history. The worker
    that ran it answered the query with a result built anew, after the cancellation arrived,
    so the two disagreed on when the run finished."""
    plan = synthetic_plan(delay("slow", 600_000), collect("final", ["slow"]))
    request = RunRequest(goal="cancel me", scenario="synthetic", plan=plan)
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request)
        for _ in range(400):
            status = await handle.query(AgentRunWorkflow.status)
            if any(n.status is NodeStatus.RUNNING for n in status.nodes):
                break
            await asyncio.sleep(0.05)
        await handle.signal(CANCEL_SIGNAL, CancelRequest(reason="enough"))
        replayed = await result_of(client, handle)
        answered = await _query_result(client, handle.id)
    assert replayed.status is RunPhase.CANCELLED
    assert answered.model_dump() == replayed.model_dump()


async def test_a_failed_run_answers_its_query_with_the_result_its_failure_carries(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(node("bad", "fail", code="MISSING_INFO"), collect("final", ["bad"]))
    request = RunRequest(goal="fail", scenario="synthetic", max_replans=0, plan=plan)
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request)
        carried = await result_of(client, handle)
        answered = await _query_result(client, handle.id)
    assert carried.status is RunPhase.FAILED_EXECUTION
    assert answered.model_dump() == carried.model_dump()


async def test_a_run_whose_workflow_failed_for_another_cause_is_one_line_for_result_and_status(
    client: Client, task_queue: str
) -> None:
    """Not a run's ending (a request no worker could read): the Python API's `result()` and
    `harness status` read it in one place and say the same one line, exit 1."""
    run_id = f"junk-{uuid.uuid4().hex[:8]}"
    harness = await Harness.connect(
        address=client.service_client.config.target_host, task_queue=task_queue
    )
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            RUN_WORKFLOW, {"goal": 7}, id=run_id, task_queue=task_queue
        )
        for _ in range(400):
            if (await handle.describe()).status is WorkflowExecutionStatus.FAILED:
                break
            await asyncio.sleep(0.05)
        run = harness.run(run_id)
        with pytest.raises(RunFailed) as by_result:
            await run.result()
        with pytest.raises(RunFailed) as by_status:
            await run.status()
    said = f"run {run_id} failed inside Temporal: "
    assert str(by_result.value).startswith(said) and "not a RunRequest" in str(by_result.value)
    assert str(by_status.value) == str(by_result.value)
    assert exit_code_of(by_result.value) == exit_code_of(by_status.value) == 1
