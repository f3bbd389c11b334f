"""CLI commands that talk to Temporal: start a run and wait for it, show a run's status."""

from __future__ import annotations

import sys
import uuid

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from durable_harness._client.run_results import run_result
from durable_harness.exceptions import InvalidInput, NotFound, RunFailed, Unavailable
from harness.engine.bounds import request_problems
from harness.engine.run import RunPhase, RunRequest, RunResult, RunStatus
from harness.engine.run_models import RunModels
from infra.client import connect
from infra.settings import Settings
from workflows import AgentRunWorkflow, search_attributes


def new_run_id() -> str:
    return f"run-{uuid.uuid4().hex[:12]}"


async def client_for(settings: Settings) -> Client:
    try:
        return await connect(settings)
    except ValueError as error:
        raise InvalidInput(
            f"TEMPORAL_ADDRESS={settings.temporal_address} is not an address like "
            f"localhost:7233 ({error})"
        ) from error
    except RuntimeError as error:
        raise Unavailable(
            f"cannot reach Temporal at {settings.temporal_address} "
            f"(namespace {settings.temporal_namespace}): start a dev server with `harness server` "
            "or set TEMPORAL_ADDRESS"
        ) from error


def ui_link(settings: Settings, run_id: str) -> str:
    """The run's page in the Temporal UI."""
    return f"{settings.ui_url}/namespaces/{settings.temporal_namespace}/workflows/{run_id}"


def check_request(request: RunRequest) -> RunRequest:
    """The request, or one line that says what is out of range (see harness.engine.bounds)."""
    problems = request_problems(request)
    if problems:
        raise InvalidInput("cannot start this run: " + "; ".join(problems))
    return request


async def start_run(client: Client, settings: Settings, request: RunRequest, run_id: str) -> None:
    """Start the run with its search attributes; without them if the server lacks them."""
    check_request(request)
    try:
        try:
            await _start(client, settings, request, run_id, with_search_attributes=True)
        except RPCError as error:
            if "search attribute" not in error.message.lower():
                raise
            print(  # a hint to whoever started the run (the CLI's notes go to stderr too)
                "this server has no Harness* search attributes, so the run cannot be filtered "
                "in the UI; `harness server` registers them",
                file=sys.stderr,
            )
            await _start(client, settings, request, run_id, with_search_attributes=False)
    except WorkflowAlreadyStartedError as error:
        raise InvalidInput(f"a run with id '{run_id}' already exists; pick another --id") from error


async def _start(
    client: Client,
    settings: Settings,
    request: RunRequest,
    run_id: str,
    *,
    with_search_attributes: bool,
) -> None:
    await client.start_workflow(
        AgentRunWorkflow.run,
        request,
        id=run_id,
        task_queue=settings.task_queue,
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        static_summary=f"{request.scenario}: {request.goal}"[:200],
        static_details=static_details(request, run_id),
        search_attributes=(
            search_attributes.with_goal(
                search_attributes.initial(request.scenario, RunPhase.CREATED.value), request.goal
            )
            if with_search_attributes
            else None
        ),
    )


def static_details(request: RunRequest, run_id: str) -> str:
    """What the UI shows of a run for all its life: its limits, provider and the commands that
    inspect it (markdown)."""
    limits = request.limits
    budget = ", ".join(
        f"{name} {value}"
        for name, value in (
            ("tokens", limits.max_tokens),
            ("tool calls", limits.max_tool_calls),
            ("seconds", limits.max_seconds),
            ("cost USD", limits.max_cost_usd),
        )
        if value is not None
    )
    lines = [
        f"**{request.scenario}**: {request.goal[:500]}",
        "",
        f"- budget: {budget or 'no limit'}; max replans {request.max_replans}; "
        f"max concurrency {request.max_concurrency}",
        f"- provider: {request.provider or 'the worker default'}; "
        f"{'a fixed plan' if request.plan is not None else 'planned by the planner'}; "
        f"signed actors: {', '.join(sorted(request.actor_keys)) or 'none'}",
        f"- models: {_models(request)}",
        f"- `harness status {run_id}` · `harness trace {run_id}` · `harness waits {run_id}` · "
        f"`harness report {run_id} --out DIR`",
    ]
    return "\n".join(lines)


def _models(request: RunRequest) -> str:
    named = request.models.named()
    return ", ".join(
        f"{role} {named.get(role, 'the worker default')}" for role in RunModels.model_fields
    )


async def has_worker(client: Client, task_queue: str) -> bool:
    """Whether any worker polls `task_queue`: a hint for users whose run would sit waiting,
    and a quick answer where a query would time out."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    response = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
    )
    return len(response.pollers) > 0


RUN_ENDED = frozenset(
    {
        WorkflowExecutionStatus.COMPLETED,
        WorkflowExecutionStatus.FAILED,
        WorkflowExecutionStatus.CANCELED,
    }
)
"""How a run's workflow ends (workflows.outcome); each carries or rebuilds its RunResult."""


async def run_status(client: Client, run_id: str) -> RunStatus | RunResult:
    """A finished run's result, or a running run's live status."""
    handle = client.get_workflow_handle(run_id)
    try:
        description = await handle.describe()
    except RPCError as error:
        raise NotFound(f"no run with id '{run_id}': {error.message}") from error
    if description.status in RUN_ENDED:
        return await run_result(client, run_id)
    if description.status != WorkflowExecutionStatus.RUNNING:
        name = description.status.name if description.status else "UNKNOWN"
        raise RunFailed(f"run {run_id} ended as {name} in Temporal")
    no_worker = f"run {run_id} is running, but no worker answered for it"
    hint = "start one with `python -m worker`"
    if not await has_worker(client, description.task_queue):
        raise Unavailable(f"{no_worker} (none polls task queue {description.task_queue}); {hint}")
    try:
        status: RunStatus = await handle.query(AgentRunWorkflow.status)
    except RPCError as error:
        raise Unavailable(f"{no_worker} ({error.message}); {hint}") from error
    return status
