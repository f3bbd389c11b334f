"""The pydantic-ai runtime's slices, driven from workflow code as a session drives them, against
the real server, offline (the worker's default model: the harness's offline agent as a
pydantic-ai FunctionModel)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from activities.llm import ProviderRegistry
from activities.llm.scripted import ScriptedProvider
from activities.mcp_hub import McpHub
from activities.tool_runner import ToolActivities
from harness.catalog.tools import ToolSpec
from harness.engine.sessions import SessionStatus, SliceResult
from harness.waits.wait_book import WaitKind
from scenarios import get_scenario
from tests.runtimes.slice_flow import RuntimeSlicesWorkflow, SlicePlan
from tests.support import activity_timeline, history_events
from worker.app import default_services
from worker.pydantic_ai import runtime_plugins

pytest.importorskip("pydantic_ai")


def synthetic_tools(*names: str) -> list[ToolSpec]:
    catalog = get_scenario("synthetic").catalog()
    return [spec for name in names if (spec := catalog.get(name)) is not None]


GOAL = "Which port do we watch?\nms: 5\nvalue: noted\nquestion: Which port should I watch?"


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


async def test_a_slice_ends_waiting_on_the_agents_question_and_the_next_answers_with_its_answer(
    client: Client, task_queue: str
) -> None:
    tools = synthetic_tools("delay", "echo")
    plan = SlicePlan(
        runtime="pydantic-ai", message=GOAL, tools=tools, max_turns=4, slices=3, answer="Lisbon"
    )
    workflow_id, results = await run_slices(client, task_queue, plan)
    first, second = results
    # the first turn asks for the pack's tools and the person at once: the tools are made,
    # then the slice ends WAITING on the question
    assert first.status is SessionStatus.WAITING and first.turns == 1
    assert first.wait is not None and first.wait.kind is WaitKind.USER_INPUT
    assert first.wait.tool == "ask_user" and first.wait.prompt == "Which port should I watch?"
    assert [(call.tool, call.ok) for call in first.tool_calls] == [("delay", True), ("echo", True)]
    # answered, the next slice resumes from the checkpoint and the agent answers
    assert second.status is SessionStatus.DONE and second.turns == 1
    assert second.answer is not None and "Lisbon" in second.answer and "noted" in second.answer
    assert second.usage.total_tokens > 0 and second.usage.models == ["harness-offline"]
    # the pack's tool ran as the harness's own tool activity, with a per-slice call id
    summaries = {
        summary for _, summary in activity_timeline(await history_events(client, workflow_id))
    }
    assert "chat.s1.t1.c1 delay(ms=5, value=noted)" in summaries


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
