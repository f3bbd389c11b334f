"""The budget says no: admission stops at pressure 1.0, time runs out, the judge is skipped."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from harness.engine.budget import BudgetLimits
from harness.engine.dag import NodeStatus
from harness.engine.run import RunPhase, RunRequest
from tests.factories import collect, delay, synthetic_plan
from tests.support import execute_run, history_events, running_worker

THREE_CITIES = "Compare Paris, Tokyo and New York"


async def test_tool_call_limit_ends_the_run_budget_exhausted_with_partial_results(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=THREE_CITIES, limits=BudgetLimits(max_tool_calls=4))
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.BUDGET_EXHAUSTED
    statuses = [node.status for node in result.nodes]
    assert statuses.count(NodeStatus.DONE) == 4
    assert statuses.count(NodeStatus.SKIPPED) == 6
    assert all(n.result is not None for n in result.nodes if n.status is NodeStatus.DONE)
    skipped = [n for n in result.nodes if n.status is NodeStatus.SKIPPED]
    assert {n.error_message for n in skipped} == {"budget exhausted"}
    assert result.budget.pressure >= 1.0
    assert result.report is None and not result.report_partial


async def test_a_budget_exhausted_run_fails_in_temporal_with_one_line_and_no_stack_trace(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=THREE_CITIES, limits=BudgetLimits(max_tool_calls=4))
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.BUDGET_EXHAUSTED
    events = await history_events(client, result.run_id)
    failed = next(
        event.workflow_execution_failed_event_attributes.failure
        for event in events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED
    )
    assert failed.message.startswith("BUDGET_EXHAUSTED: ")
    assert "\n" not in failed.message
    assert failed.stack_trace == ""  # the UI shows the message, no frames from the venv
    assert not failed.HasField("cause")
    assert failed.application_failure_info.type == "BUDGET_EXHAUSTED"
    assert failed.application_failure_info.non_retryable


async def test_wall_clock_limit_ends_a_long_run_in_time(client: Client, task_queue: str) -> None:
    plan = synthetic_plan(
        delay("quick", 10), delay("slow", 60_000), collect("final", ["quick", "slow"])
    )
    request = RunRequest(
        goal="a slow plan", scenario="synthetic", plan=plan, limits=BudgetLimits(max_seconds=1)
    )
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.BUDGET_EXHAUSTED
    nodes = {node.id: node for node in result.nodes}
    assert nodes["quick"].status is NodeStatus.DONE
    assert nodes["slow"].status is NodeStatus.SKIPPED
    assert nodes["slow"].error_message == "budget exhausted: wall-clock limit reached"
    assert nodes["final"].status is NodeStatus.SKIPPED
    assert result.wall_seconds < 30


async def test_pressure_above_point_nine_skips_the_judge_and_says_why(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        free = await execute_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
        spent = free.budget.usage.tokens - free.usage_by_role["critic"].total_tokens
        limited = RunRequest(
            goal="Compare Paris and Tokyo", limits=BudgetLimits(max_tokens=int(spent / 0.95))
        )
        result = await execute_run(client, task_queue, limited)
    assert result.status is RunPhase.SUCCEEDED
    assert 0.9 <= result.budget.pressure < 1.0
    assert result.verdict is not None
    assert result.verdict.checked_by == ["structure", "cities.check"]
    assert result.verdict.judge_skipped_reason is not None
    assert "judge skipped" in result.verdict.judge_skipped_reason
    assert "critic" not in result.usage_by_role


async def test_budget_usage_equals_the_sum_of_what_was_charged(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal=THREE_CITIES))
    node_tokens = sum(n.usage.total_tokens for n in result.nodes if n.usage is not None)
    role_tokens = sum(usage.total_tokens for usage in result.usage_by_role.values())
    assert result.usage_by_role["worker"].total_tokens == node_tokens
    assert result.budget.usage.tokens == role_tokens == result.usage.total_tokens
    assert set(result.usage_by_role) == {"planner", "worker", "critic"}
    assert result.budget.usage.tool_calls == sum(n.attempts for n in result.nodes) == 10
    node_cost = sum(n.usage.cost_usd for n in result.nodes if n.usage is not None)
    assert result.usage_by_role["worker"].cost_usd == node_cost
    assert result.budget.usage.cost_usd == result.usage.cost_usd
