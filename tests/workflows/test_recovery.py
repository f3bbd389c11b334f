"""Each error class takes its path: retry, replan, or halt; replans stop at max_replans."""

from __future__ import annotations

from collections import Counter

from temporalio.client import Client

from harness.core.errors import ErrorCode
from harness.engine.dag import NodeStatus
from harness.engine.faults import FaultSpec
from harness.engine.run import RunPhase, RunRequest
from tests.support import activity_timeline, execute_run, history_events, running_worker

ATLANTIS = "Compare Paris, Atlantis and Tokyo"


async def test_transient_fault_is_retried_and_the_node_succeeds_on_attempt_three(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(
        goal="Compare Paris, Tokyo and New York",
        faults=[FaultSpec.parse("get_population:Tokyo=RATE_LIMITED*2")],
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    nodes = {node.id: node for node in result.nodes}
    assert nodes["pop_tokyo"].attempts == 3
    assert nodes["pop_paris"].attempts == 1
    retries = [(e.node_id, e.data["attempt"]) for e in result.trace if e.kind == "node.retry"]
    assert retries == [("pop_tokyo", 2), ("pop_tokyo", 3)]
    assert result.budget.usage.tool_calls == 12  # 10 nodes + 2 retried attempts


async def test_each_retry_is_stamped_when_its_attempt_started_not_when_the_node_ended(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(
        goal="Compare Paris and Tokyo",
        faults=[FaultSpec.parse("get_population:Tokyo=RATE_LIMITED*2")],
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    tokyo = [e for e in result.trace if e.node_id == "pop_tokyo"]
    assert [e.kind for e in tokyo] == ["node.start", "node.retry", "node.retry", "node.finish"]
    start, second, third, finish = tokyo
    assert [second.message, third.message] == ["attempt 2", "attempt 3"]
    assert start.at < second.at < third.at < finish.at
    assert (third.at - second.at).total_seconds() >= 1.0  # the retry policy's backoff
    assert finish.latency_ms is not None
    assert finish.latency_ms < (finish.at - second.at).total_seconds() * 1000


async def test_missing_info_replans_without_the_unknown_city_and_reuses_finished_nodes(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal=ATLANTIS))
    assert result.status is RunPhase.SUCCEEDED
    assert result.attempts == 2
    assert result.report is not None and "No data could be found for: Atlantis" in result.report
    first = result.attempt_history[0]
    assert first.outcome is RunPhase.FAILED_EXECUTION
    assert {f.code for f in first.failure} == {ErrorCode.MISSING_INFO.value}
    scheduled = Counter(
        (summary.split(" ")[0], summary.split(" ", 2)[2])
        for kind, summary in activity_timeline(await history_events(client, result.run_id))
        if kind == "scheduled" and "(city=" in summary
    )
    for city in ("Paris", "Tokyo"):
        for tool in ("get_population", "get_timezone", "summarize_city"):
            assert scheduled[(tool, f"(city={city})")] == 1
    reused = sorted(node.id for node in result.nodes if node.reused)
    assert reused == ["pop_paris", "pop_tokyo", "sum_paris", "sum_tokyo", "tz_paris", "tz_tokyo"]
    decision = next(e for e in result.trace if e.kind == "recovery.decide")
    assert decision.data["error_class"] == "MISSING_INFO"
    assert decision.data["action"] == "REPLAN"


async def test_fatal_failure_halts_the_run_without_replanning(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(
        goal="Compare Paris and Tokyo",
        faults=[FaultSpec.parse("get_timezone:Paris=TOOL_EXECUTION_FAILED")],
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_EXECUTION
    assert result.attempts == 1
    assert result.error is not None and "tz_paris" in result.error
    failed = next(node for node in result.nodes if node.id == "tz_paris")
    assert failed.status is NodeStatus.FAILED and failed.attempts == 1
    decision = next(e for e in result.trace if e.kind == "recovery.decide")
    assert (decision.data["error_class"], decision.data["action"]) == ("FATAL", "HALT")


async def test_replans_stop_at_max_replans(client: Client, task_queue: str) -> None:
    request = RunRequest(
        goal="Compare Paris and Tokyo",
        max_replans=1,
        faults=[FaultSpec.parse("get_population:Paris=MISSING_INFO*99")],
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    # attempt 1 fails on Paris, the replan drops Paris, and Tokyo alone still succeeds
    assert result.status is RunPhase.SUCCEEDED
    assert result.attempts == 2
    request = RunRequest(
        goal="Compare Paris and Tokyo",
        max_replans=1,
        faults=[FaultSpec.parse("summarize_city=INVALID_ARGUMENT*99")],
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_EXECUTION
    assert result.attempts == 2
    actions = [e.data["action"] for e in result.trace if e.kind == "recovery.decide"]
    assert actions == ["REPLAN", "HALT"]
