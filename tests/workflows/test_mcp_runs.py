"""Runs over MCP tools on a real dev server, with the real git server (mcp-server-git) on a
repository the test makes: the repo scenario answers citing only commit ids the repository has,
a destructive git tool waits for approval, a killed MCP server costs one retry, an argument the
tool's schema refuses stops the plan before any call, and a run survives its worker's SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle

from activities.mcp_hub import McpHub, McpSources
from durable_harness._client.run_results import result_of
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.contracts import APPROVE_UPDATE, RUN_TOOL_ACTIVITY
from harness.engine.dag import NodeStatus
from harness.engine.run import RunPhase, RunRequest, ScaleOptions
from harness.waits.deliveries import ApprovalRequest
from harness.waits.wait_book import Decision
from scenarios.repo import REPO_PATH_VARIABLE
from scenarios.repo.history import cited_ids
from tests.mcp_servers.repositories import (
    ROOT,
    SCHEDULER_COMMITS,
    git,
    hub_over,
    kill_processes,
    make_repository,
    shifting_server,
    until_slow_calls,
)
from tests.payment_service import payment_service
from tests.support import (
    activity_timeline,
    deliver_update,
    execute_run,
    history_events,
    pending_wait,
    running_worker,
    start_run,
)
from tests.worker_processes import workers
from tool_servers.config import MCP_CONFIG_VARIABLE, McpServer
from workflows import AgentRunWorkflow

pytestmark = pytest.mark.timeout(240)

QUESTION = "What changed in the scheduler in the last 20 commits, and why?"
literal, result = ArgumentBinding.literal, ArgumentBinding.node_result


def report_over(*lookups: str, log: str = "log") -> PlanNode:
    return PlanNode(
        id="report",
        tool="write_repo_report",
        arguments=[literal("question", "what changed?"), result("log", log)],
        deps=list(lookups),
    )


def git_log(count: int = 5) -> PlanNode:
    return PlanNode(id="log", tool="git_log", arguments=[literal("max_count", count)])


def nap(seconds: float) -> PlanNode:
    return PlanNode(id="nap", tool="slow", arguments=[literal("seconds", seconds)])


async def until_running(handle: WorkflowHandle[Any, Any], node_id: str) -> None:
    for _ in range(600):
        status = await handle.query(AgentRunWorkflow.status)
        if any(n.id == node_id and n.status is NodeStatus.RUNNING for n in status.nodes):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"node {node_id} never ran")


async def test_a_repo_run_answers_from_the_history_citing_only_commit_ids_the_repository_has(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    shas = make_repository(tmp_path / "repo", commits=24)
    async with running_worker(client, task_queue, mcp=hub_over(tmp_path / "repo")):
        run = await execute_run(client, task_queue, RunRequest(goal=QUESTION, scenario="repo"))
    assert run.status is RunPhase.SUCCEEDED, run.error
    assert run.report is not None
    cited = cited_ids(run.report)
    assert cited and all(any(sha.startswith(c) for sha in shas) for c in cited)
    newest_first = {number: shas[24 - number] for number in SCHEDULER_COMMITS}
    in_range = [sha for number, sha in newest_first.items() if number > 4]  # the last 20
    assert all(sha[:10] in run.report for sha in in_range)
    assert newest_first[3][:10] not in run.report  # older than the last 20
    assert run.plan is not None
    lookups = [n for n in run.plan.nodes if n.tool != "write_repo_report"]
    assert {n.tool for n in lookups} == {"git_log", "git_show", "git_diff"}
    assert all(n.deps == [] for n in lookups)  # in parallel
    assert all(n.status is NodeStatus.DONE for n in run.nodes)


async def test_a_destructive_git_tool_waits_for_approval_and_a_rejection_fails_it(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    make_repository(tmp_path / "repo", commits=2)
    reset = PlanNode(id="reset", tool="git_reset", arguments=[])
    plan = Plan(nodes=[git_log(), reset, report_over("log", "reset")])
    async with running_worker(client, task_queue, mcp=hub_over(tmp_path / "repo")):
        handle = await start_run(
            client, task_queue, RunRequest(goal="reset", scenario="repo", plan=plan)
        )
        await pending_wait(handle, "approve-reset")
        await deliver_update(
            handle,
            APPROVE_UPDATE,
            ApprovalRequest(
                wait_id="approve-reset", decision=Decision.REJECT, actor="human:maintainer"
            ),
        )
        run = await result_of(client, handle)
    assert run.status is not RunPhase.SUCCEEDED
    node = next(n for n in run.nodes if n.id == "reset")
    assert node.status is NodeStatus.FAILED and node.error_code == "POLICY_VIOLATION"
    assert node.attempts == 0  # the server never saw the call


async def test_killing_the_mcp_server_mid_call_costs_one_transient_attempt(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    make_repository(tmp_path / "repo", commits=3)
    tools = tmp_path / "tools"
    tools.write_text("slow")
    marker = f"shift-{uuid.uuid4().hex[:8]}"
    hub = hub_over(tmp_path / "repo", shifting_server("shift", tools, marker))
    plan = Plan(nodes=[git_log(), nap(3), report_over("log", "nap")])
    async with running_worker(client, task_queue, mcp=hub):
        handle = await start_run(
            client, task_queue, RunRequest(goal="nap", scenario="repo", plan=plan)
        )
        await until_slow_calls(tools)
        assert kill_processes(marker) == 1
        run = await result_of(client, handle)
    assert run.status is RunPhase.SUCCEEDED, run.error
    napped = next(n for n in run.nodes if n.id == "nap")
    assert napped.attempts == 2 and "waited 3 s" in str(napped.result)
    events = await history_events(client, handle.id)
    failed = [e for e in events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED]
    assert failed == []  # retried inside Temporal's policy: the history records the last attempt


async def test_an_argument_the_tools_schema_refuses_stops_the_plan_before_any_call(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    make_repository(tmp_path / "repo", commits=2)
    bad = PlanNode(id="log", tool="git_log", arguments=[literal("max_count", "twenty")])
    plan = Plan(nodes=[bad, report_over("log")])
    async with running_worker(client, task_queue, mcp=hub_over(tmp_path / "repo")):
        handle = await start_run(
            client, task_queue, RunRequest(goal="g", scenario="repo", plan=plan)
        )
        run = await result_of(client, handle)
    assert run.status is RunPhase.FAILED_VALIDATION
    assert run.error is not None and "max_count" in run.error and "expected integer" in run.error
    events = await history_events(client, handle.id)
    calls = [
        e
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == RUN_TOOL_ACTIVITY
    ]
    assert calls == []


@pytest.mark.timeout(300)
@pytest.mark.waits_out_timeouts
async def test_a_run_over_mcp_tools_survives_its_worker_killed_mid_call(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    shas = make_repository(tmp_path / "repo", commits=4)
    tools = tmp_path / "tools"
    tools.write_text("slow")
    marker = f"shift-{uuid.uuid4().hex[:8]}"
    config = tmp_path / "mcp.json"
    server = shifting_server("shift", tools, marker)
    config.write_text(json.dumps({"mcpServers": {"shift": server.model_dump(exclude={"name"})}}))
    environment = {REPO_PATH_VARIABLE: str(tmp_path / "repo"), MCP_CONFIG_VARIABLE: str(config)}
    plan = Plan(nodes=[git_log(), nap(2), report_over("log", "nap")])
    async with (
        payment_service(client, tmp_path) as service,
        workers(client, task_queue, service, tmp_path / "workers.log", environment) as pool,
    ):
        first = await pool.start()
        handle = await start_run(
            client, task_queue, RunRequest(goal="nap", scenario="repo", plan=plan)
        )
        await until_slow_calls(tools)
        pool.kill(first)
        await pool.start()
        run = await result_of(client, handle)
    assert run.status is RunPhase.SUCCEEDED, run.error
    assert run.report is not None and shas[0][:10] in run.report
    napped = next(n for n in run.nodes if n.id == "nap")
    assert napped.attempts == 2  # the dead worker's attempt timed out on its heartbeat


async def test_cancelling_a_run_cancels_its_mcp_call_and_the_connection_serves_the_next_run(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    make_repository(tmp_path / "repo", commits=2)
    tools = tmp_path / "tools"
    tools.write_text("slow")
    hub = hub_over(tmp_path / "repo", shifting_server("shift", tools, uuid.uuid4().hex))
    long_nap = Plan(nodes=[git_log(), nap(60), report_over("log", "nap")])
    short_nap = Plan(nodes=[git_log(), nap(0.1), report_over("log", "nap")])
    async with running_worker(client, task_queue, mcp=hub):
        handle = await start_run(
            client, task_queue, RunRequest(goal="nap", scenario="repo", plan=long_nap)
        )
        await until_running(handle, "nap")
        await handle.cancel()
        cancelled = await result_of(client, handle)
        after = await execute_run(
            client, task_queue, RunRequest(goal="nap", scenario="repo", plan=short_nap)
        )
    assert cancelled.status is RunPhase.CANCELLED
    events = await history_events(client, handle.id)
    timeline = activity_timeline(events)
    assert ("scheduled", "slow nap (seconds=60)") in timeline
    assert ("completed", "slow nap (seconds=60)") not in timeline
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED in {e.event_type for e in events}
    assert after.status is RunPhase.SUCCEEDED, after.error


async def test_a_tool_the_server_dropped_after_the_catalog_was_listed_fails_as_unknown(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    make_repository(tmp_path / "repo", commits=2)
    tools = tmp_path / "tools"
    tools.write_text("slow,echo")
    marker = f"shift-{uuid.uuid4().hex[:8]}"
    hub = hub_over(tmp_path / "repo", shifting_server("shift", tools, marker))
    echo = PlanNode(id="echo", tool="echo", arguments=[literal("text", "hi")], deps=["nap"])
    plan = Plan(nodes=[git_log(), nap(1.5), echo, report_over("log", "echo")])
    async with running_worker(client, task_queue, mcp=hub):
        handle = await start_run(
            client, task_queue, RunRequest(goal="nap", scenario="repo", plan=plan, max_replans=0)
        )
        await until_slow_calls(tools)
        tools.write_text("slow")  # the server comes back without echo
        assert kill_processes(marker) == 1
        run = await result_of(client, handle)
    assert run.status is not RunPhase.SUCCEEDED
    nodes = {n.id: n for n in run.nodes}
    assert nodes["nap"].status is NodeStatus.DONE and nodes["nap"].attempts == 2
    assert nodes["echo"].error_code == "UNKNOWN_TOOL"
    assert "MCP server 'shift' no longer offers 'echo'" in (nodes["echo"].error_message or "")


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs this project's git history")
async def test_the_repo_scenario_answers_about_this_projects_own_history(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue, mcp=hub_over(ROOT)):
        run = await execute_run(client, task_queue, RunRequest(goal=QUESTION, scenario="repo"))
    assert run.status is RunPhase.SUCCEEDED, run.error
    commits = set(git(ROOT, "rev-list", "--all").split())
    cited = cited_ids(run.report or "")
    assert cited and all(any(sha.startswith(c) for sha in commits) for c in cited)


async def test_mcp_calls_of_a_wide_plan_run_in_child_batches_on_their_server(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    shas = make_repository(tmp_path / "repo", commits=6)
    shows = [
        PlanNode(id=f"show_{i}", tool="git_show", arguments=[literal("revision", f"HEAD~{i}")])
        for i in range(6)
    ]
    report = report_over("log", *(n.id for n in shows))
    report.arguments += [result("commits", n.id) for n in shows]
    plan = Plan(nodes=[git_log(), *shows, report])
    scale = ScaleOptions(batch_plan_nodes=4, batch_min_ready=3, batch_size=10)
    async with running_worker(client, task_queue, mcp=hub_over(tmp_path / "repo")):
        run = await execute_run(
            client, task_queue, RunRequest(goal="g", scenario="repo", plan=plan, scale=scale)
        )
    assert run.status is RunPhase.SUCCEEDED, run.error
    nodes = {n.id: n for n in run.nodes}
    assert all(
        nodes[f"show_{i}"].result and shas[i] in str(nodes[f"show_{i}"].result) for i in range(6)
    )
    events = await history_events(client, run.run_id)
    children = [
        e for e in events
        if e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    ]  # fmt: skip
    assert children  # the git calls ran in a child batch, on the same server


async def test_a_server_that_fails_with_a_secret_in_its_words_leaves_no_secret_in_history(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    secret = f"s3cret-{uuid.uuid4().hex}"
    make_repository(tmp_path / "repo", commits=2)
    leaky = McpServer(name="leaky", command="/nonexistent/${LEAKY_TOKEN}/mcp")
    environment = {**os.environ, REPO_PATH_VARIABLE: str(tmp_path / "repo"), "LEAKY_TOKEN": secret}
    base = McpSources.from_environment(environment)
    hub = McpHub(McpSources(worker=(leaky,), scenarios=base.scenarios), environment)
    async with running_worker(client, task_queue, mcp=hub):
        handle = await start_run(client, task_queue, RunRequest(goal=QUESTION, scenario="repo"))
        with pytest.raises(WorkflowFailureError):  # no catalog, no run: Temporal shows Failed
            await handle.result()
    history = (await client.get_workflow_handle(handle.id).fetch_history()).to_json()
    assert "MCP server 'leaky' is unavailable" in history
    assert "/nonexistent/***/mcp" in history and secret not in history
