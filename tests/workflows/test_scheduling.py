"""The scheduler starts each node when its own dependencies finish, within the concurrency cap."""

from __future__ import annotations

from temporalio.client import Client

from harness.core.plan import PlanNode
from harness.engine.dag import NodeStatus
from harness.engine.run import RunPhase, RunRequest
from tests.factories import collect, delay, lit, node, ref, synthetic_plan
from tests.support import activity_timeline, execute_run, history_events, node_of, running_worker


def _synthetic(plan_nodes: list[PlanNode], max_concurrency: int = 16) -> RunRequest:
    return RunRequest(
        goal="run the given plan",
        scenario="synthetic",
        plan=synthetic_plan(*plan_nodes),
        max_concurrency=max_concurrency,
        max_replans=0,
    )


async def test_dependent_starts_when_its_own_dependency_finishes(
    client: Client, task_queue: str
) -> None:
    plan = [
        delay("a1", 50),
        delay("a2", 50, deps=["a1"]),
        delay("b1", 1500),
        collect("final", ["a2", "b1"]),
    ]
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, _synthetic(plan))
    assert result.status is RunPhase.SUCCEEDED
    timeline = [
        (kind, node_of(s))
        for kind, s in activity_timeline(await history_events(client, result.run_id))
    ]
    assert timeline.index(("scheduled", "a2")) < timeline.index(("completed", "b1"))
    assert timeline.index(("completed", "a1")) < timeline.index(("scheduled", "a2"))
    assert timeline.index(("completed", "b1")) < timeline.index(("scheduled", "final"))


async def test_running_nodes_never_exceed_the_concurrency_cap(
    client: Client, task_queue: str
) -> None:
    leaves = [delay(f"n{i}", 100) for i in range(7)]
    plan = [*leaves, collect("final", [node.id for node in leaves])]
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, _synthetic(plan, max_concurrency=2))
    assert result.status is RunPhase.SUCCEEDED
    in_flight, peak = 0, 0
    for kind, _ in activity_timeline(await history_events(client, result.run_id)):
        in_flight += 1 if kind == "scheduled" else -1
        peak = max(peak, in_flight)
    assert peak == 2


async def test_dependents_of_a_failed_node_are_skipped_and_other_branches_finish(
    client: Client, task_queue: str
) -> None:
    plan = [
        node("broken", "fail", code="MISSING_INFO"),
        delay("after_broken", 10, deps=["broken"]),
        delay("independent", 200),
        collect("final", ["after_broken", "independent"]),
    ]
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, _synthetic(plan))
    statuses = {node.id: node.status for node in result.nodes}
    assert result.status is RunPhase.FAILED_EXECUTION
    assert statuses == {
        "broken": NodeStatus.FAILED,
        "after_broken": NodeStatus.SKIPPED,
        "independent": NodeStatus.DONE,
        "final": NodeStatus.SKIPPED,
    }
    outcome = {node.id: node for node in result.nodes}
    assert outcome["broken"].error_code == "MISSING_INFO"
    assert outcome["after_broken"].error_message == "dependency 'broken' failed"
    assert outcome["final"].error_message == "dependency 'broken' failed"
    skip_events = [e.node_id for e in result.trace if e.kind == "node.skip"]
    assert skip_events == ["after_broken", "final"]


async def test_node_result_arguments_carry_dependency_results(
    client: Client, task_queue: str
) -> None:
    plan = [
        delay("source", 10),
        node("echo", "delay", lit("ms", 0), ref("value", "source", path="value"), deps=["source"]),
        collect("final", ["echo"]),
    ]
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, _synthetic(plan))
    assert result.status is RunPhase.SUCCEEDED
    echo = next(node for node in result.nodes if node.id == "echo")
    assert echo.result == {"ms": 0, "value": "source"}
    assert result.report == "collected 1 results"


async def test_transient_failures_are_retried_by_temporal_and_counted(
    client: Client, task_queue: str
) -> None:
    plan = [
        node("flaky", "fail", code="RATE_LIMITED", times=1),
        collect("final", ["flaky"]),
    ]
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, _synthetic(plan))
    assert result.status is RunPhase.SUCCEEDED
    flaky = next(node for node in result.nodes if node.id == "flaky")
    assert flaky.attempts == 2
