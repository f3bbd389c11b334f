"""Helpers shared by the tests that run workflows on the dev server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHandle

from activities.llm import LLMProvider, ProviderRegistry, ScriptedProvider
from activities.mcp_hub import McpHub
from durable_harness._client.run_results import result_of
from harness.core.plan import Plan
from harness.core.usage import TokenUsage
from harness.engine.messages import PlanRequest, PlanResponse
from harness.engine.run import RunRequest, RunResult
from harness.waits.wait_book import DeliveryReceipt, Wait, WaitStatus
from memory import MemoryStore
from scenarios.base import Pack
from starter.servers.dev_server import temporal_binary
from worker.app import build_worker
from workflows import AgentRunWorkflow, search_attributes


@asynccontextmanager
async def running_worker(
    client: Client,
    task_queue: str,
    provider: LLMProvider | None = None,
    memory: MemoryStore | None = None,
    mcp: McpHub | None = None,
) -> AsyncIterator[None]:
    """`memory`: the store the worker uses; by default the test's own state directory's.
    `mcp`: its MCP servers; by default the ones the environment configures."""
    registry = ProviderRegistry.always(provider or ScriptedProvider())
    async with build_worker(client, task_queue, registry, memory=memory, mcp=mcp):
        yield


class Replans(ScriptedProvider):
    """A planner for the synthetic scenario, which has none: the request's plan is attempt 1,
    `plan` every replan (the rest is the offline provider's)."""

    def __init__(self, plan: Plan) -> None:
        self._plan = plan

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        return PlanResponse(plan=self._plan, planned_by="test:replans", usage=TokenUsage())


async def execute_run(client: Client, task_queue: str, request: RunRequest) -> RunResult:
    """Start a run and return its RunResult, whatever its ending (as
    durable_harness._client.run_results reads it)."""
    handle = await client.start_workflow(
        AgentRunWorkflow.run,
        request,
        id=f"test-{uuid.uuid4().hex[:10]}",
        task_queue=task_queue,
    )
    return await result_of(client, handle)


async def history_events(client: Client, run_id: str) -> list[HistoryEvent]:
    history = await client.get_workflow_handle(run_id).fetch_history()
    return list(history.events)


def activity_timeline(events: list[HistoryEvent]) -> list[tuple[str, str]]:
    """(kind, summary-or-node) per activity event, in history order: 'scheduled' | 'completed'."""
    names: dict[int, str] = {}
    timeline: list[tuple[str, str]] = []
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            names[event.event_id] = event.user_metadata.summary.data.decode().strip('"')
            timeline.append(("scheduled", names[event.event_id]))
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            attrs = event.activity_task_completed_event_attributes
            timeline.append(("completed", names[attrs.scheduled_event_id]))
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
            attrs_failed = event.activity_task_failed_event_attributes
            timeline.append(("failed", names[attrs_failed.scheduled_event_id]))
    return timeline


def node_of(summary: str) -> str:
    """The node id after the tool in an activity summary like 'get_population n3 (city=Tokyo)'
    (or 'agent scout turn 1')."""
    words = summary.split(" ", 2)
    return words[1] if len(words) > 1 else words[0]


async def start_run(
    client: Client, task_queue: str, request: RunRequest, *, searchable: bool = False
) -> WorkflowHandle[Any, Any]:
    """Start a run without waiting; `searchable` adds the Harness* search attributes."""
    return await client.start_workflow(
        AgentRunWorkflow.run,
        request,
        id=f"run-{uuid.uuid4().hex[:10]}",
        task_queue=task_queue,
        search_attributes=(
            search_attributes.initial(request.scenario, "CREATED") if searchable else None
        ),
    )


async def pending_wait(handle: WorkflowHandle[Any, Any], wait_id: str) -> Wait:
    """The wait once it is PENDING (polls the `waits` query for up to ten seconds)."""
    for _ in range(200):
        waits = await handle.query(AgentRunWorkflow.waits)
        found = [w for w in waits if w.id == wait_id and w.status is WaitStatus.PENDING]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"wait {wait_id} never became pending")


async def deliver_update(
    handle: WorkflowHandle[Any, Any], name: str, request: BaseModel
) -> DeliveryReceipt:
    receipt: DeliveryReceipt = await handle.execute_update(
        name, request, result_type=DeliveryReceipt
    )
    return receipt


async def signal_by_cli(client: Client, run_id: str, name: str, *inputs: str) -> None:
    """`temporal workflow signal`, as an operator would type it (`--input` given 0..n times)."""
    arguments = [arg for value in inputs for arg in ("--input", value)]
    process = await asyncio.create_subprocess_exec(
        temporal_binary(),
        "workflow",
        "signal",
        "--address",
        client.service_client.config.target_host,
        "--workflow-id",
        run_id,
        "--name",
        name,
        *arguments,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await process.communicate()
    assert process.returncode == 0, err.decode()
