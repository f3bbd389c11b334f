"""A run started by any client checks its own request: out of range ends it, nothing wedges."""

from __future__ import annotations

from temporalio.client import Client

from harness.budget import BudgetLimits
from harness.run import RunPhase, RunRequest
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
