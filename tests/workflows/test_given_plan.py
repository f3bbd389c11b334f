"""A plan the caller gives is the caller's: when it fails validation the run ends
FAILED_VALIDATION at once with every problem, and never goes to the planner or asks the user."""

from __future__ import annotations

from temporalio.client import Client

from harness.engine.run import RunPhase, RunRequest
from harness.engine.trace import TraceKind
from tests.factories import collect, delay, node, plan, ref, synthetic_plan
from tests.support import execute_run, running_worker


async def test_an_invalid_given_plan_ends_the_run_at_once_with_every_problem(
    client: Client, task_queue: str
) -> None:
    broken = synthetic_plan(node("a", "no_such_tool"), collect("end", ["a", "ghost"]))
    async with running_worker(client, task_queue):
        result = await execute_run(
            client, task_queue, RunRequest(goal="g", scenario="synthetic", plan=broken)
        )
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.attempts == 1 and result.waits == []
    assert result.error is not None and "no_such_tool" in result.error and "ghost" in result.error
    kinds = [e.kind for e in result.trace]
    assert TraceKind.RECOVERY_DECIDE not in kinds and TraceKind.MEMORY_RETRIEVE not in kinds


async def test_a_plan_over_the_node_limit_fails_at_once_and_a_raised_limit_runs_it(
    client: Client, task_queue: str
) -> None:
    wide = synthetic_plan(*(delay(f"n{i}", 0) for i in range(12)), collect("end", []))
    wide.nodes[-1].deps = [f"n{i}" for i in range(12)]
    request = RunRequest(goal="wide", scenario="synthetic", plan=wide, max_nodes=10)
    async with running_worker(client, task_queue):
        refused = await execute_run(client, task_queue, request)
        raised = await execute_run(client, task_queue, request.model_copy(update={"max_nodes": 13}))
    assert refused.status is RunPhase.FAILED_VALIDATION and refused.waits == []
    assert raised.status is RunPhase.SUCCEEDED


async def test_a_path_the_producing_tools_result_lacks_fails_the_run_before_any_node_runs(
    client: Client, task_queue: str
) -> None:
    wrong = plan(
        node("pop", "get_population", city="Lisbon"),
        node("tz", "get_timezone", city="Lisbon"),
        node("sum", "summarize_city", city="Lisbon"),
        node(
            "report",
            "aggregate_report",
            ref("populations", "pop", "populaton"),
            ref("timezones", "tz"),
            ref("summaries", "sum"),
            deps=["pop", "tz", "sum"],
        ),
    )
    async with running_worker(client, task_queue):
        result = await execute_run(
            client, task_queue, RunRequest(goal="Lisbon", scenario="cities", plan=wrong)
        )
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and "NODE_RESULT_BAD_PATH" in result.error
    assert "did you mean 'population'?" in result.error
    assert not [e for e in result.trace if e.kind is TraceKind.NODE_START]
