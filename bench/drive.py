"""Start a harness run or a naive run, time it client-side, and never wait forever.

A run whose workflow task keeps failing (say, the deadlock detector, or a payload over the
server's limit) is stopped after a few attempts with the failure's message, instead of retrying
until the timeout. Tasks the server force-closes (too many completions buffered while a long
task ran) are given more attempts: the run may still get through.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from typing import Any, TypeVar

from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle

from bench.env import BenchError
from bench.models import NaiveRequest, NaiveResult
from bench.naive import NaiveLevelsWorkflow
from bench.plans import IN_FLIGHT_CAP
from harness.core.plan import Plan
from harness.engine.run import RunRequest, RunResult
from workflows import AgentRunWorkflow

SYNTHETIC_GOAL = "run the given plan"
WATCH_S = 5.0
STUCK_ATTEMPTS = 3  # a workflow task failing in the worker this many times in a row is stuck
FORCE_CLOSED_ATTEMPTS = 20  # server force-closes (buffered events overflow) may still progress

_FORCE_CLOSED = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND

R = TypeVar("R")


@dataclass(frozen=True)
class Timed:
    workflow_id: str
    run_id: str
    seconds: float


class RunFailed(BenchError):
    """The run did not return a result; `timed` names it, so its history can still be read."""

    def __init__(self, message: str, timed: Timed) -> None:
        super().__init__(message)
        self.timed = timed


def synthetic_request(plan: Plan, max_concurrency: int | None = None) -> RunRequest:
    """A fixed synthetic plan: no planner; node limit sized to the plan; concurrency as given,
    else every node at once up to IN_FLIGHT_CAP."""
    size = len(plan.nodes)
    return RunRequest(
        goal=SYNTHETIC_GOAL,
        scenario="synthetic",
        plan=plan,
        max_concurrency=max_concurrency or min(size, IN_FLIGHT_CAP),
        max_nodes=max(size, 1),
        max_replans=0,
    )


async def run_harness(
    client: Client, task_queue: str, request: RunRequest, *, timeout: float, label: str
) -> tuple[RunResult, Timed]:
    workflow_id = f"bench-{label}-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    handle = await client.start_workflow(
        AgentRunWorkflow.run, request, id=workflow_id, task_queue=task_queue
    )
    return await _result(handle, started, timeout)


async def run_naive(
    client: Client, task_queue: str, request: NaiveRequest, *, timeout: float, label: str
) -> tuple[NaiveResult, Timed]:
    workflow_id = f"bench-naive-{label}-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    handle = await client.start_workflow(
        NaiveLevelsWorkflow.run, request, id=workflow_id, task_queue=task_queue
    )
    return await _result(handle, started, timeout)


async def run_workflow(
    client: Client,
    workflow: str,
    task_queue: str,
    request: Any,
    result_type: type[R],
    *,
    timeout: float,
    label: str,
) -> tuple[R, Timed]:
    """Any bench workflow by name (the baselines of bench.naive_agent), timed as the others."""
    workflow_id = f"bench-{label}-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    handle = await client.start_workflow(
        workflow, request, id=workflow_id, task_queue=task_queue, result_type=result_type
    )
    return await _result(handle, started, timeout)


async def _result(
    handle: WorkflowHandle[Any, R], started: float, timeout: float
) -> tuple[R, Timed]:
    def timed() -> Timed:
        return Timed(handle.id, handle.first_execution_run_id or "", time.perf_counter() - started)

    waiting = asyncio.ensure_future(handle.result())
    try:
        while True:
            done, _ = await asyncio.wait({waiting}, timeout=WATCH_S)
            if done:
                break
            problem = await _stuck(handle)
            if problem is None and time.perf_counter() - started > timeout:
                problem = f"did not finish within {timeout:.0f} s"
            if problem is not None:
                await handle.terminate(reason=f"bench: {problem}")
                raise RunFailed(f"{handle.id}: {problem}", timed())
        result = waiting.result()
    except WorkflowFailureError as error:
        raise RunFailed(f"{handle.id} failed: {error.cause or error}", timed()) from None
    finally:
        waiting.cancel()
    return result, timed()


async def _stuck(handle: WorkflowHandle[Any, Any]) -> str | None:
    """The last workflow task failure, once the task has failed too many times in a row."""
    description = await handle.describe()
    attempt = description.raw_description.pending_workflow_task.attempt
    if attempt < STUCK_ATTEMPTS:
        return None
    problem, force_closed = "no failure event", False
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
            attributes = event.workflow_task_failed_event_attributes
            cause = WorkflowTaskFailedCause.Name(attributes.cause)
            problem = f"{cause}: {attributes.failure.message[:300]}".rstrip(": ")
            force_closed = attributes.cause == _FORCE_CLOSED
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
            problem = "timed out: the worker spent over the start-to-close timeout on one task"
            force_closed = False
    if force_closed and attempt < FORCE_CLOSED_ATTEMPTS:
        return None
    return f"workflow task failing (attempt {attempt}): {problem}"
