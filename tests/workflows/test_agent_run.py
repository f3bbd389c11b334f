"""The run as a whole: cities end to end, replanning after an invalid plan, status and trace."""

from __future__ import annotations

from temporalio.client import Client

from activities.llm import ScriptedProvider
from harness.catalog.agent_turns import AgentTurnReply, AgentTurnRequest
from harness.catalog.llm import JudgeReply, JudgeRequest, TextReply, TextRequest
from harness.core.plan import PlanNode
from harness.engine.dag import NodeStatus
from harness.engine.messages import PlanRequest, PlanResponse
from harness.engine.run import RunPhase, RunRequest
from harness.engine.validation import IssueCode
from scenarios.base import Pack
from tests.factories import approval_request
from tests.support import (
    activity_timeline,
    execute_run,
    history_events,
    pending_wait,
    running_worker,
    start_run,
)
from workflows import AgentRunWorkflow

THREE_CITIES = "Compare Paris, Tokyo and New York"


class InvalidFirstPlan:
    """A planner that misspells a tool on its first attempt, then plans like the offline one."""

    name = "invalid-first"

    def __init__(self) -> None:
        self._scripted = ScriptedProvider()
        self.requests: list[PlanRequest] = []

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        self.requests.append(request)
        response = await self._scripted.plan(request, scenario)
        if request.attempt == 1:
            first = response.plan.nodes[0]
            broken = PlanNode(id=first.id, tool="get_populaton", arguments=first.arguments)
            response.plan.nodes[0] = broken
        return response

    async def write(self, request: TextRequest) -> TextReply:
        return await self._scripted.write(request)

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        return await self._scripted.judge(request)

    async def agent_turn(self, request: AgentTurnRequest) -> AgentTurnReply:
        return await self._scripted.agent_turn(request)


async def test_cities_goal_succeeds_with_a_report_for_every_city(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal=THREE_CITIES))
    assert result.status is RunPhase.SUCCEEDED
    assert result.report is not None
    for city in ("Paris", "Tokyo", "New York"):
        assert city in result.report
    assert result.counts.nodes == 10 and result.counts.done == 10
    assert result.verdict is not None and result.verdict.passed
    assert result.verdict.checked_by == ["structure", "cities.check", "judge:scripted-v1"]
    assert result.verdict.score == 1.0
    assert all(node.status is NodeStatus.DONE and node.attempts == 1 for node in result.nodes)
    assert result.usage.total_tokens > 0
    assert result.budget.usage.tool_calls == 10


async def test_all_nine_data_nodes_are_scheduled_before_any_completes(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal=THREE_CITIES))
    timeline = [
        (kind, summary)
        for kind, summary in activity_timeline(await history_events(client, result.run_id))
        if not summary.startswith(("catalog", "contract", "memories", "plan", "check", "remember"))
    ]
    kinds = [kind for kind, _ in timeline]
    assert kinds[:9] == ["scheduled"] * 9
    assert kinds[9:18] == ["completed"] * 9
    assert timeline[18][0] == "scheduled" and timeline[18][1].startswith("aggregate_report report")


async def test_activity_summaries_name_the_tool_first_then_the_node_and_its_arguments(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal=THREE_CITIES))
    summaries = {s for kind, s in activity_timeline(await history_events(client, result.run_id))}
    assert "get_population pop_tokyo (city=Tokyo)" in summaries
    assert any(s.startswith("aggregate_report report (populations=[3 items]") for s in summaries)


async def test_an_invalid_first_plan_is_replanned_and_succeeds_on_attempt_two(
    client: Client, task_queue: str
) -> None:
    planner = InvalidFirstPlan()
    async with running_worker(client, task_queue, provider=planner):
        result = await execute_run(client, task_queue, RunRequest(goal=THREE_CITIES))
    assert result.status is RunPhase.SUCCEEDED
    assert result.attempts == 2
    first, second = result.attempt_history
    assert [issue.code for issue in first.validation_issues] == [IssueCode.UNKNOWN_TOOL]
    assert first.outcome is RunPhase.FAILED_VALIDATION
    assert second.outcome is RunPhase.SUCCEEDED
    assert [failure.code for failure in planner.requests[1].failures] == ["UNKNOWN_TOOL"]
    assert "did you mean 'get_population'" in planner.requests[1].failures[0].message
    decisions = [e.status for e in result.trace if e.kind == "recovery.decide"]
    assert decisions == ["REPLAN"]


async def test_replans_stop_at_max_replans_and_the_run_fails_validation(
    client: Client, task_queue: str
) -> None:
    planner = InvalidFirstPlan()
    request = RunRequest(goal=THREE_CITIES, max_replans=0)
    async with running_worker(client, task_queue, provider=planner):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.attempts == 1
    assert result.error is not None and "UNKNOWN_TOOL" in result.error
    assert len(planner.requests) == 1


async def test_a_goal_without_cities_fails_with_a_message_naming_what_is_missing(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(
            client, task_queue, RunRequest(goal="Compare some cities", ask_user=False)
        )
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and "names no city" in result.error


async def test_trace_events_follow_the_phases_in_order(client: Client, task_queue: str) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
        queried = await client.get_workflow_handle(result.run_id).query(AgentRunWorkflow.trace)
    kinds = [event.kind.value for event in result.trace]
    assert kinds[:4] == ["run.start", "memory.retrieve", "planning.finish", "validation.finish"]
    assert kinds[-2:] == ["verification.finish", "run.finish"]
    assert kinds.count("node.start") == kinds.count("node.finish") == 7
    assert queried == result.trace


async def test_status_query_reports_phase_plan_and_counts(client: Client, task_queue: str) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
        status = await client.get_workflow_handle(result.run_id).query(AgentRunWorkflow.status)
    assert status.phase is RunPhase.SUCCEEDED
    assert status.plan == result.plan
    assert status.counts.done == 7
    assert [node.id for node in status.nodes] == [node.id for node in result.nodes]


async def test_current_details_show_phase_counts_and_the_plan(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
        metadata = await client.get_workflow_handle(result.run_id).query(
            "__temporal_workflow_metadata"
        )
    details = metadata.current_details
    assert details.startswith("**SUCCEEDED**")
    assert "nodes: 7 done, 0 failed, 0 skipped of 7" in details
    assert "- `pop_paris` get_population (DONE)" in details


async def test_current_details_name_each_pending_wait_and_what_answers_it(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        metadata = await handle.query("__temporal_workflow_metadata")
        await handle.terminate("test finished")
    details = metadata.current_details
    assert "pending waits: 1" in details
    assert "- `approve-change` APPROVAL: approve change side_effect(target=prod)?" in details
    assert f"`harness approve {handle.id} approve-change --actor human:NAME [--reject]`" in details
    assert (
        f"temporal workflow signal --workflow-id {handle.id} --name approve --input "
        '\'{"wait_id": "approve-change", "decision": "approve", "actor": "human:NAME"}\''
    ) in details
    queries = {q.name: q.description for q in metadata.definition.query_definitions}
    assert queries["status"] and queries["trace"] and queries["waits"] and queries["result"]
    updates = {u.name: u.description for u in metadata.definition.update_definitions}
    assert set(updates) >= {"approve_sync", "answer_sync", "deliver_sync"}
    assert all(updates.values())
