"""The pydantic-ai runtime's slices, driven from workflow code as a session drives them, against
the real server, offline (the worker's default model: the harness's offline agent as a
pydantic-ai FunctionModel)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from temporalio.client import Client
from temporalio.worker import Replayer, Worker

from activities.llm import ProviderRegistry
from activities.llm.scripted import ScriptedProvider
from activities.mcp_hub import McpHub
from activities.tool_runner import ToolActivities
from harness.catalog.tools import ToolSpec
from harness.engine.sessions import SessionStatus, SliceResult
from harness.waits.wait_book import WaitKind
from infra.plugin import HarnessPlugin
from scenarios import get_scenario
from tests.runtimes.slice_flow import RuntimeSlicesWorkflow, SlicePlan
from tests.support import activity_timeline, history_events
from worker.app import default_services
from worker.pydantic_ai import runtime_plugins

pytest.importorskip("pydantic_ai")


def synthetic_tools(*names: str) -> list[ToolSpec]:
    catalog = get_scenario("synthetic").catalog()
    return [spec for name in names if (spec := catalog.get(name)) is not None]


GOAL = "Which port?\nms: 5\nvalue: noted\ntarget: dock\nquestion: Which port should I watch?"


@asynccontextmanager
async def slices_worker(client: Client, task_queue: str) -> AsyncIterator[None]:
    """The test workflow, the harness's tool activity, and the pydantic-ai runtime's plugins."""
    tools = ToolActivities(
        ProviderRegistry.always(ScriptedProvider()), default_services(), McpHub.from_environment({})
    )
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[RuntimeSlicesWorkflow],
        activities=[tools.run_tool],
        plugins=runtime_plugins({}),
    ):
        yield


async def run_slices(
    client: Client, task_queue: str, plan: SlicePlan
) -> tuple[str, list[SliceResult]]:
    workflow_id = f"slices-{uuid.uuid4().hex[:10]}"
    async with slices_worker(client, task_queue):
        results = await client.execute_workflow(
            RuntimeSlicesWorkflow.run,
            plan,
            id=workflow_id,
            task_queue=task_queue,
        )
    return workflow_id, results


async def test_slices_end_waiting_on_an_approval_and_a_question_and_the_last_answers(
    client: Client, task_queue: str
) -> None:
    tools = synthetic_tools("delay", "echo", "side_effect")
    plan = SlicePlan(
        runtime="pydantic-ai", message=GOAL, tools=tools, max_turns=4, slices=4, answer="Lisbon"
    )
    workflow_id, results = await run_slices(client, task_queue, plan)
    approval, question, done = results
    # the first turn asks for every tool and the person at once: the plain calls are made,
    # then the slice ends WAITING on the side effect's approval, naming the call's id
    assert approval.status is SessionStatus.WAITING and approval.turns == 1
    assert approval.wait is not None and approval.wait.kind is WaitKind.APPROVAL
    assert approval.wait.prompt == "approve chat.t1.c3 side_effect(target=dock)?"
    assert [(c.tool, c.ok) for c in approval.tool_calls] == [("delay", True), ("echo", True)]
    # approved, the next slice makes the call, then waits on the question (no model turn yet)
    assert question.status is SessionStatus.WAITING and question.turns == 0
    assert [(c.tool, c.ok) for c in question.tool_calls] == [("side_effect", True)]
    assert question.wait is not None and question.wait.kind is WaitKind.USER_INPUT
    assert question.wait.tool == "ask_user"
    assert question.wait.prompt == "Which port should I watch?"
    # answered, the last slice resumes from the checkpoint and the agent answers with it all
    assert done.status is SessionStatus.DONE and done.turns == 1
    assert done.answer is not None and "Lisbon" in done.answer and "noted" in done.answer
    assert done.usage.total_tokens > 0 and done.usage.models == ["harness-offline"]
    # the pack's tools ran as the harness's own tool activities, the side effect once, under
    # the id its approval named (its idempotency key's node id)
    events = await history_events(client, workflow_id)
    scheduled = [summary for kind, summary in activity_timeline(events) if kind == "scheduled"]
    assert "delay chat.t1.c1 (ms=5, value=noted)" in scheduled
    assert scheduled.count("side_effect chat.t1.c3 (target=dock)") == 1
    # and the workflow replays from its history as it ran: pydantic-ai's runs in it included
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    replayer = Replayer(
        workflows=[RuntimeSlicesWorkflow], plugins=[HarnessPlugin(), *runtime_plugins({})]
    )
    await replayer.replay_workflow(history)


async def test_a_slice_that_takes_its_turns_asks_for_continuation_and_the_next_goes_on(
    client: Client, task_queue: str
) -> None:
    plan = SlicePlan(
        runtime="pydantic-ai",
        message="Echo it.\nvalue: kelp",
        tools=synthetic_tools("echo"),
        max_turns=1,
        slices=3,
    )
    _, results = await run_slices(client, task_queue, plan)
    assert [r.status for r in results] == [
        SessionStatus.CONTINUATION_REQUIRED,
        SessionStatus.DONE,
    ]
    assert [r.turns for r in results] == [1, 1]
    assert [call.tool for call in results[0].tool_calls] == ["echo"]
    assert results[1].answer is not None and "kelp" in results[1].answer
