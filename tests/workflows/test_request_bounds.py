"""A run started by any client checks its own request: out of range ends it, nothing wedges."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError

from durable_harness._client.run_results import result_of
from harness.engine.budget import BudgetLimits
from harness.engine.contracts import EVAL_WORKFLOW, RUN_WORKFLOW
from harness.engine.run import RunPhase, RunRequest
from harness.evals.eval_report import EvalReport
from starter.servers.dev_server import temporal_binary
from tests.factories import collect, node, synthetic_plan
from tests.support import execute_run, running_worker


async def test_a_request_out_of_range_ends_the_run_failed_validation_with_every_problem(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal="x", max_replans=50, limits=BudgetLimits(max_seconds=1e300))
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None
    assert result.error.startswith("the request is out of range: max_seconds: at most a year")
    assert "max_replans: at most 20, not 50" in result.error
    assert result.nodes == [] and result.attempts == 0


async def test_a_request_that_is_not_a_run_request_fails_the_run_instead_of_wedging_it(
    client: Client, task_queue: str
) -> None:
    """Started by the `temporal` CLI with junk input: Failed, with pydantic's reason."""
    run_id = f"junk-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        process = await asyncio.create_subprocess_exec(
            temporal_binary(), "workflow", "start",
            "--address", client.service_client.config.target_host,
            "--task-queue", task_queue, "--type", RUN_WORKFLOW,
            "--workflow-id", run_id, "--input", '{"goal": 7, "nonsense": true}',
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await process.communicate()
        assert process.returncode == 0, err.decode()
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(client.get_workflow_handle(run_id).result(), timeout=20)
        description = await client.get_workflow_handle(run_id).describe()
    assert description.status is WorkflowExecutionStatus.FAILED
    assert "not a RunRequest" in str(failed.value.cause) and "goal" in str(failed.value.cause)


HUGE = 10**400
"""A valid JSON number and a valid int, past float's range (float(HUGE) raises OverflowError)."""
RAW_HUGE_REQUESTS = [
    {"goal": "x", "limits": {"max_tokens": HUGE}},
    {"goal": "x", "limits": {"max_tool_calls": HUGE}},
    {"goal": "x", "max_concurrency": HUGE},
    {"goal": "x", "max_nodes": HUGE},
    {"goal": "x", "max_replans": HUGE},
]


@pytest.mark.parametrize(
    "raw",
    RAW_HUGE_REQUESTS,
    ids=["max_tokens", "max_tool_calls", "max_concurrency", "max_nodes", "max_replans"],
)
async def test_a_raw_request_with_an_int_past_float_range_ends_failed_validation(
    client: Client, task_queue: str, raw: dict[str, object]
) -> None:
    """Started as raw JSON by any client (F3): every workflow task failed "int too large to
    convert to float" and the run never ended."""
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            RUN_WORKFLOW, raw, id=f"huge-{uuid.uuid4().hex[:8]}", task_queue=task_queue
        )
        result = await asyncio.wait_for(result_of(client, handle), timeout=60)
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and "not a number of about 401 digits" in result.error


async def test_a_run_with_an_int_past_float_range_cancelled_before_it_starts_ends(
    client: Client, task_queue: str
) -> None:
    """Cancelled before any worker took it: `harness cancel` could not end the wedged run."""
    handle = await client.start_workflow(
        RUN_WORKFLOW,
        {"goal": "x", "limits": {"max_tokens": HUGE}},
        id=f"huge-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )
    await handle.cancel()
    async with running_worker(client, task_queue):
        result = await asyncio.wait_for(result_of(client, handle), timeout=60)
        description = await handle.describe()
    assert result.status in {RunPhase.CANCELLED, RunPhase.FAILED_VALIDATION}
    assert description.status in {WorkflowExecutionStatus.CANCELED, WorkflowExecutionStatus.FAILED}


@pytest.mark.parametrize("seconds", [1e300, HUGE, 10**12], ids=["1e300", "10**400", "31,000 years"])
async def test_an_event_timeout_past_the_last_date_fails_its_node_not_the_workflow_task(
    client: Client, task_queue: str, seconds: float
) -> None:
    """The schema check takes any positive number; the deadline overflowed a datetime inside
    the workflow, which failed every workflow task of the run."""
    wait = node("w", "await_event", event="go", timeout_seconds=seconds)
    plan = synthetic_plan(wait, collect("c", ["w"]))
    request = RunRequest(goal="wait", scenario="synthetic", max_replans=0, plan=plan)
    async with running_worker(client, task_queue):
        result = await asyncio.wait_for(execute_run(client, task_queue, request), timeout=60)
    assert result.status is RunPhase.FAILED_EXECUTION
    outcome = next(n for n in result.nodes if n.id == "w")
    assert outcome.error_code == "INVALID_ARGUMENT"


async def test_an_eval_case_whose_run_id_temporal_would_refuse_is_refused_not_wedged(
    client: Client, task_queue: str
) -> None:
    """A raw EvalRequest with a 990-character scenario: the child run's id passed Temporal's
    1,000 bytes, the server refused the command, and every task of the suite failed."""
    case = {"id": "long", "goal": "g", "scenario": "s" * 990}
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            EVAL_WORKFLOW,
            {"cases": [case]},
            id=f"eval-{uuid.uuid4().hex[:8]}",
            task_queue=task_queue,
        )
        report = EvalReport.model_validate(await asyncio.wait_for(handle.result(), timeout=60))
    [result] = report.results
    assert not result.passed
    assert "run id: at most 1000 bytes" in result.unmet[0]
