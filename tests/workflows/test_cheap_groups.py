"""Ready calls of cheap, in-memory tools share one local activity, and each node still keeps its
own outcome, its own retries and its own trace."""

from __future__ import annotations

from collections import Counter

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from harness.core.errors import ErrorCode
from harness.core.plan import Plan
from harness.engine.dag import NodeStatus
from harness.engine.faults import FaultSpec
from harness.engine.run import RunPhase, RunRequest, RunResult, ScaleOptions
from harness.engine.trace import TraceKind
from tests.factories import node, ref, synthetic_plan
from tests.support import execute_run, history_events, running_worker

WIDTH = 30


def _echoes(width: int = WIDTH) -> Plan:
    leaves = [node(f"n{i}", "echo", value=f"v{i}") for i in range(width)]
    final = node("final", "collect", ref("inputs", "n0"), deps=[leaf.id for leaf in leaves])
    return synthetic_plan(*leaves, final)


def _summaries(events: list[HistoryEvent]) -> list[str]:
    """What each local activity's marker says it ran (its summary)."""
    return [
        event.user_metadata.summary.data.decode().strip('"')
        for event in events
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and event.user_metadata.summary.data
    ]


async def _run(client: Client, task_queue: str, request: RunRequest) -> RunResult:
    async with running_worker(client, task_queue):
        return await execute_run(client, task_queue, request)


async def test_ready_cheap_calls_share_local_activities_and_each_node_keeps_its_result_and_trace(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(
        goal="echo",
        scenario="synthetic",
        plan=_echoes(),
        max_concurrency=WIDTH,
        scale=ScaleOptions(cheap_group_size=10),
    )
    result = await _run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    results = {outcome.id: outcome for outcome in result.nodes}
    for index in range(WIDTH):
        leaf = results[f"n{index}"]
        assert leaf.result == {"value": f"v{index}"}
        assert leaf.attempts == 1 and leaf.tool_latency_ms is not None
    summaries = _summaries(await history_events(client, result.run_id))
    groups = [summary for summary in summaries if "cheap calls" in summary]
    assert len(groups) == 3 and all(
        summary.startswith("echo: 10 cheap calls") for summary in groups
    )
    assert not [summary for summary in summaries if summary.startswith("echo n")]
    started = Counter(e.node_id for e in result.trace if e.kind is TraceKind.NODE_START)
    finished = Counter(e.node_id for e in result.trace if e.kind is TraceKind.NODE_FINISH)
    assert all(started[f"n{i}"] == 1 and finished[f"n{i}"] == 1 for i in range(WIDTH))


async def test_a_cheap_call_that_fails_transiently_is_retried_on_its_own_counting_both_attempts(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(
        goal="echo",
        scenario="synthetic",
        plan=_echoes(),
        max_concurrency=WIDTH,
        scale=ScaleOptions(cheap_group_size=10),
        faults=[FaultSpec(tool="echo", argument_value="v3", code=ErrorCode.RATE_LIMITED)],
    )
    result = await _run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    results = {outcome.id: outcome for outcome in result.nodes}
    assert results["n3"].status is NodeStatus.DONE and results["n3"].attempts == 2
    assert all(results[f"n{i}"].attempts == 1 for i in range(WIDTH) if i != 3)
    retries = [e for e in result.trace if e.kind is TraceKind.NODE_RETRY]
    assert [(e.node_id, e.data.get("attempt")) for e in retries] == [("n3", 2)]
    summaries = _summaries(await history_events(client, result.run_id))
    assert [summary for summary in summaries if " n3 " in summary] == ["echo n3 (value=v3)"]
    assert result.counts.done == WIDTH + 1


async def test_a_cheap_call_that_fails_for_good_fails_its_own_node_only(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(
        goal="echo",
        scenario="synthetic",
        plan=_echoes(),
        max_concurrency=WIDTH,
        max_replans=0,
        scale=ScaleOptions(cheap_group_size=10),
        faults=[FaultSpec(tool="echo", argument_value="v4", code=ErrorCode.INVALID_ARGUMENT)],
    )
    result = await _run(client, task_queue, request)
    results = {outcome.id: outcome for outcome in result.nodes}
    assert results["n4"].status is NodeStatus.FAILED
    assert results["n4"].error_code == ErrorCode.INVALID_ARGUMENT.value
    assert results["n4"].attempts == 1
    assert all(results[f"n{i}"].status is NodeStatus.DONE for i in range(WIDTH) if i != 4)


async def test_the_child_batches_of_a_wide_plan_group_their_cheap_calls_too(
    client: Client, task_queue: str
) -> None:
    scale = ScaleOptions(batch_plan_nodes=10, batch_min_ready=5, batch_size=20, cheap_group_size=8)
    request = RunRequest(
        goal="wide", scenario="synthetic", plan=_echoes(40), max_concurrency=40, scale=scale
    )
    result = await _run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    assert all(outcome.status is NodeStatus.DONE for outcome in result.nodes)
    for number in (1, 2):
        child = await history_events(client, f"{result.run_id}-attempt-1-batch-{number}")
        groups = sorted(summary.split(" n")[0] for summary in _summaries(child))
        assert groups == ["echo: 4 cheap calls", "echo: 8 cheap calls", "echo: 8 cheap calls"]


async def test_a_group_size_of_one_makes_each_cheap_call_its_own_local_activity(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(
        goal="echo",
        scenario="synthetic",
        plan=_echoes(4),
        max_concurrency=4,
        scale=ScaleOptions(cheap_group_size=1),
    )
    result = await _run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    summaries = _summaries(await history_events(client, result.run_id))
    assert not [summary for summary in summaries if "cheap calls" in summary]
    assert sorted(s for s in summaries if s.startswith("echo n")) == [
        f"echo n{i} (value=v{i})" for i in range(4)
    ]
