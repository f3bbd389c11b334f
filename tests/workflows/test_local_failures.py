"""A local activity's failure ends as a queued activity's would: the phase or the node fails, with
its reason, never the workflow. temporalio 1.35 raises a failed local activity's ApplicationError
bare (not as an ActivityError), so it went past every `except ActivityError` and failed the
workflow: Temporal status Failed, no RunResult."""

from __future__ import annotations

import uuid

import pytest
from temporalio import activity
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.exceptions import ApplicationError

import worker.app
from activities.tool_runner import ToolActivities
from durable_harness._client.run_results import result_of
from harness.core.errors import ErrorCode
from harness.core.plan import Plan
from harness.engine.contracts import CHECK_REPORT_ACTIVITY, RUN_TOOLS_ACTIVITY, RUN_WORKFLOW
from harness.engine.dag import NodeStatus
from harness.engine.faults import FaultSpec
from harness.engine.messages import (
    ReportCheckRequest,
    ReportCheckResult,
    ToolCallGroup,
    ToolCallGroupResult,
)
from harness.engine.run import RunPhase, RunRequest, RunResult, ScaleOptions
from tests.factories import node, ref, synthetic_plan
from tests.support import execute_run, running_worker


def _echoes(width: int) -> Plan:
    leaves = [node(f"n{i}", "echo", value=f"v{i}") for i in range(width)]
    final = node("final", "collect", ref("inputs", "n0"), deps=[leaf.id for leaf in leaves])
    return synthetic_plan(*leaves, final)


async def test_a_raw_run_with_an_unknown_scenario_ends_failed_validation_with_the_reason(
    client: Client, task_queue: str
) -> None:
    """Started as raw JSON by any client (the CLI checks the scenario before it starts a run)."""
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            RUN_WORKFLOW,
            {"goal": "x", "scenario": "nope"},
            id=f"nope-{uuid.uuid4().hex[:8]}",
            task_queue=task_queue,
        )
        result = await result_of(client, handle)
        description = await handle.describe()
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and "nope" in result.error and "available:" in result.error
    assert result.attempts == 0 and result.nodes == []
    assert description.status is WorkflowExecutionStatus.FAILED  # the outcome's status


async def _run_echoes(
    client: Client, task_queue: str, fault: FaultSpec, scale: ScaleOptions, width: int = 4
) -> RunResult:
    request = RunRequest(
        goal="echo",
        scenario="synthetic",
        plan=_echoes(width),
        max_concurrency=width,
        max_replans=0,
        scale=scale,
        faults=[fault],
    )
    async with running_worker(client, task_queue):
        return await execute_run(client, task_queue, request)


async def test_a_local_tool_that_fails_for_good_fails_its_node_not_the_workflow(
    client: Client, task_queue: str
) -> None:
    fault = FaultSpec(tool="echo", argument_value="v2", code=ErrorCode.INVALID_ARGUMENT)
    result = await _run_echoes(client, task_queue, fault, ScaleOptions(cheap_group_size=1))
    assert result.status is RunPhase.FAILED_EXECUTION
    nodes = {outcome.id: outcome for outcome in result.nodes}
    assert nodes["n2"].status is NodeStatus.FAILED
    assert nodes["n2"].error_code == ErrorCode.INVALID_ARGUMENT.value
    assert nodes["n2"].attempts == 1
    assert all(nodes[f"n{i}"].status is NodeStatus.DONE for i in (0, 1, 3))


async def test_a_local_tool_that_stays_rate_limited_fails_its_node_after_all_its_attempts(
    client: Client, task_queue: str
) -> None:
    fault = FaultSpec(tool="echo", argument_value="v1", code=ErrorCode.RATE_LIMITED, times=9)
    result = await _run_echoes(client, task_queue, fault, ScaleOptions(cheap_group_size=1))
    assert result.status is RunPhase.FAILED_EXECUTION
    nodes = {outcome.id: outcome for outcome in result.nodes}
    assert nodes["n1"].status is NodeStatus.FAILED
    assert nodes["n1"].error_code == ErrorCode.RATE_LIMITED.value
    assert nodes["n1"].attempts == 3  # TOOL_RETRY's, as a queued tool's


async def test_a_local_tool_that_fails_in_a_child_batch_fails_its_node_not_the_batch(
    client: Client, task_queue: str
) -> None:
    scale = ScaleOptions(batch_plan_nodes=5, batch_min_ready=5, batch_size=20, cheap_group_size=1)
    fault = FaultSpec(tool="echo", argument_value="v7", code=ErrorCode.INVALID_ARGUMENT)
    result = await _run_echoes(client, task_queue, fault, scale, width=12)
    assert result.status is RunPhase.FAILED_EXECUTION
    nodes = {outcome.id: outcome for outcome in result.nodes}
    assert nodes["n7"].status is NodeStatus.FAILED
    assert nodes["n7"].error_code == ErrorCode.INVALID_ARGUMENT.value
    assert all(nodes[f"n{i}"].status is NodeStatus.DONE for i in range(12) if i != 7)


@activity.defn(name=RUN_TOOLS_ACTIVITY)
async def _broken_group(self: ToolActivities, group: ToolCallGroup) -> ToolCallGroupResult:
    """A group activity that fails as a whole (as a crash or a timeout of the group would)."""
    raise ApplicationError("the group broke", type=ErrorCode.TOOL_EXECUTION_FAILED.value)


async def test_a_cheap_group_whose_activity_fails_makes_each_call_again_on_its_own(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ToolActivities, "run_tools", _broken_group)
    request = RunRequest(
        goal="echo",
        scenario="synthetic",
        plan=_echoes(6),
        max_concurrency=6,
        scale=ScaleOptions(cheap_group_size=3),
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED
    leaves = [outcome for outcome in result.nodes if outcome.id != "final"]
    assert len(leaves) == 6 and all(leaf.status is NodeStatus.DONE for leaf in leaves)
    assert all(leaf.attempts == 2 for leaf in leaves)  # the group's, then its own


@activity.defn(name=CHECK_REPORT_ACTIVITY)
async def _broken_check(request: ReportCheckRequest) -> ReportCheckResult:
    raise ApplicationError("the check broke", type=ErrorCode.TOOL_EXECUTION_FAILED.value)


async def test_a_scenario_check_that_fails_fails_the_verdict_with_its_reason(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker.app, "check_report", _broken_check)
    request = RunRequest(goal="echo", scenario="synthetic", plan=_echoes(2), max_replans=0)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_VERIFICATION
    assert result.error is not None and "the check broke" in result.error
