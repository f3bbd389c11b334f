"""The client (`durable_harness.Harness`), for applications, and the one way the `harness` CLI
does each thing: connect, start a run, follow it, deliver what it waits for, and read its
result. Runs started here carry the search attributes, static details and id form of the CLI's,
and deliveries get the CLI's checks and receipts.

    harness = await Harness.connect()                 # or connect(address=..., profile=...)
    run = await harness.start("Compare Paris and Tokyo", session_id="s-1")
    async for event in run.progress():               # trace events as they happen
        ...
    result = await run.result()                      # the RunResult, whatever the ending
    await harness.tasks.task_command(scope, command)  # tasks, contracts, lessons

Errors are `durable_harness.exceptions.HarnessError`s: one line that says what went wrong
(`InvalidInput`, and its `TaskRefused`, `NotFound`, `Unavailable`, `RunFailed`); the CLI maps
each to its exit code.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue, ValidationError
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from durable_harness._client import deliveries, runs, signed_actors
from durable_harness._client.cli_connection import environment_with
from durable_harness._client.run_results import run_result
from durable_harness.exceptions import InvalidInput, NotFound
from durable_harness.tasks import Tasks
from harness.core.problems import describe_invalid
from harness.engine.contracts import PROGRESS_QUERY
from harness.engine.progress_page import MAX_PAGE_EVENTS, ProgressPage
from harness.engine.run import RunRequest, RunResult, RunStatus
from harness.engine.run_models import RunModels
from harness.engine.sessions import SessionReply
from harness.engine.trace import TraceEvent, TraceKind
from harness.governance.work import TaskBinding
from harness.waits.deliveries import CancelRequest
from harness.waits.wait_book import DeliveryReceipt, Wait
from infra.settings import Settings, SettingsError
from workflows import AgentRunWorkflow

if TYPE_CHECKING:
    from durable_harness._client.history import ReplayedRun

PROGRESS_POLL_SECONDS = 1.0
"""How often a follower reads the run's progress: one query (nothing in history) that carries
only the events recorded since the last read."""
QUERY_TIMEOUT = timedelta(seconds=5)
"""A progress query unanswered this long (no worker holds the run) counts as not read."""
CLOSED_CHECK_POLLS = 5
"""Every this many reads, a follower also asks the server whether the workflow has closed (a
run terminated from outside never reaches a final phase of its own)."""


@dataclass(frozen=True)
class Harness:
    """A connection to the Temporal server the harness's workers poll: start runs, find them by
    id, list what they wait for. Make one with `connect` (or `with_settings`)."""

    client: Client = field(repr=False)
    settings: Settings = field(repr=False)  # it may hold TLS keys

    @classmethod
    async def connect(
        cls,
        *,
        address: str | None = None,
        namespace: str | None = None,
        profile: str | None = None,
        task_queue: str | None = None,
    ) -> Harness:
        """As the CLI connects: the Temporal profile and TEMPORAL_* variables, then these."""
        env = environment_with({"address": address, "namespace": namespace, "profile": profile})
        if task_queue:
            env["HARNESS_TASK_QUEUE"] = task_queue
        try:
            settings = Settings.from_env(env)
        except SettingsError as error:
            raise InvalidInput(str(error)) from error
        return await cls.with_settings(settings)

    @classmethod
    async def with_settings(cls, settings: Settings) -> Harness:
        return cls(await runs.client_for(settings), settings)

    async def start(
        self,
        goal: str,
        *,
        run_id: str | None = None,
        planner_model: str | None = None,
        worker_model: str | None = None,
        judge_model: str | None = None,
        agent_model: str | None = None,
        **options: Any,
    ) -> Run:
        """Start a run; `options` are RunRequest's fields (scenario, plan, session_id, limits,
        memory, provider, max_replans, agent_runtime, ...), and the models per role those of
        `harness run`. `agent_runtime="pydantic-ai"` runs its agent nodes on pydantic-ai.
        Refused in one line when out of range."""
        models = RunModels(
            planner=planner_model, worker=worker_model, judge=judge_model, agent=agent_model
        )
        try:
            request = RunRequest(goal=goal, models=models, **options)
        except ValidationError as error:
            raise InvalidInput(
                f"cannot start this run: {describe_invalid(error, whole='run')}"
            ) from error
        return await self.start_request(request, run_id=run_id)

    async def start_request(self, request: RunRequest, *, run_id: str | None = None) -> Run:
        """Start the run `request` describes. A run bound to a task needs that task open."""
        runs.check_request(request)
        if request.task is not None:
            await self._open_task(request.task)
        run_id = run_id or runs.new_run_id()
        await runs.start_run(self.client, self.settings, request, run_id)
        return self.run(run_id)

    def run(self, run_id: str) -> Run:
        """A run already started, by its id."""
        return Run(self, run_id)

    @property
    def tasks(self) -> Tasks:
        """Tasks, contracts and lessons on this server (`durable_harness.tasks`): the calls the
        `harness task`, `contract` and `lesson` commands make."""
        return Tasks(self.client, self.settings.task_queue)

    async def send(
        self,
        session_id: str,
        message: str | None = None,
        *,
        scope: str = "default",
        actor: str = "human:user",
        **start: Any,
    ) -> SessionReply:
        """Send `message` to the agent session `session_id` (none: continue the work its last
        slice left) and return its reply: DONE with the answer, WAITING with the wait to
        answer, or CONTINUATION_REQUIRED. The first message starts the session with `start`
        (SessionStart's fields: scenario, tools, runtime, provider, model, limits, task);
        later ones reach it as it is. Messages are taken one at a time, in order; the reply
        comes once a worker has run the slice (with no worker, it waits for one)."""
        from durable_harness._client import sessions

        fields = {"scope": scope, **start}
        request = sessions.session_start(session_id, **fields)
        text = sessions.session_message(message, actor)
        if request.task is not None:
            await self._open_task(request.task)
        return await sessions.send(self.client, self.settings.task_queue, request, text)

    async def pending_waits(self) -> dict[str, list[Wait]]:
        """Every running run's pending waits, by run id (a visibility query)."""
        return await deliveries.pending_waits(self.client, None)

    async def has_worker(self) -> bool:
        """Whether a worker polls this harness's task queue (a run waits for one)."""
        return await runs.has_worker(self.client, self.settings.task_queue)

    async def _open_task(self, binding: TaskBinding) -> None:
        from durable_harness._client import tasks

        task = (await tasks.ledger(self.client, binding.scope, binding.task_id)).task  # NotFound
        if task.status.is_terminal:
            raise InvalidInput(f"task '{task.id}' is {task.status.value}: a finished task is final")


@dataclass(frozen=True)
class Run:
    """One run, by its id: its status, progress and result, and the deliveries it waits for
    (approve, answer, deliver, cancel)."""

    harness: Harness
    run_id: str

    @property
    def _handle(self) -> WorkflowHandle[Any, Any]:
        return self.harness.client.get_workflow_handle(self.run_id)

    @property
    def ui_link(self) -> str:
        return runs.ui_link(self.harness.settings, self.run_id)

    async def result(self) -> RunResult:
        """The RunResult once the run ends, whatever its ending."""
        return await run_result(self.harness.client, self.run_id)

    async def status(self) -> RunStatus | RunResult:
        """The live status of a running run; the result of a finished one."""
        return await runs.run_status(self.harness.client, self.run_id)

    async def trace(self) -> list[TraceEvent]:
        """Every event, rebuilt from the workflow's history (no worker needed)."""
        return (await self.replayed()).trace

    async def replayed(self) -> ReplayedRun:
        """The run rebuilt from its workflow's history: its trace, status and result as they
        stand (no worker needed)."""
        from durable_harness._client import history

        return await history.trace_of(self.harness.client, self.run_id)

    async def waits(self) -> list[Wait]:
        """Every wait of the run: pending, delivered or closed (a query)."""
        found: list[Wait] = await self._handle.query(AgentRunWorkflow.waits)
        return found

    async def pending_waits(self) -> list[Wait]:
        """The run's pending waits, or one line that says why they cannot be read."""
        return (await deliveries.pending_waits(self.harness.client, self.run_id)).get(
            self.run_id, []
        )

    async def follow(self, after: int = 0) -> AsyncIterator[ProgressPage]:
        """What the run recorded since the last page, every PROGRESS_POLL_SECONDS, until it
        records `run.finish` (its last event) or its workflow closes however it closes
        (terminated, timed out); from the start, or after the first `after` events (a
        follower that resumes). A run not started yet, or a failing workflow task, is asked
        again."""
        polls = 0
        while True:
            polls += 1
            page = await self._page(after)
            if page is not None:
                after = page.next
                yield page
                if any(event.kind is TraceKind.RUN_FINISH for event in page.events):
                    return
                if len(page.events) == MAX_PAGE_EVENTS:
                    continue  # behind: read on at once
            if (page is None or polls % CLOSED_CHECK_POLLS == 0) and await self._closed():
                while (last := await self._page(after)) is not None and last.events:
                    after = last.next  # what the run recorded before it closed
                    yield last
                    if len(last.events) < MAX_PAGE_EVENTS:
                        break
                return
            await asyncio.sleep(PROGRESS_POLL_SECONDS)

    async def _page(self, after: int) -> ProgressPage | None:
        try:
            page: ProgressPage = await self._handle.query(
                PROGRESS_QUERY, after, result_type=ProgressPage, rpc_timeout=QUERY_TIMEOUT
            )
        except (RPCError, WorkflowQueryFailedError) as error:
            if isinstance(error, RPCError) and error.status is RPCStatusCode.NOT_FOUND:
                raise NotFound(f"no run with id '{self.run_id}'") from error
            return None
        return page

    async def progress(self) -> AsyncIterator[TraceEvent]:
        """Each trace event once, in the order the run records it, until the run ends."""
        async for page in self.follow():
            for event in page.events:
                yield event

    async def closed(self) -> bool:
        """Whether the run's workflow has closed, however it closed (a describe call: nothing
        in history); NotFound when there is no such run."""
        return await self._closed()

    async def _closed(self) -> bool:
        try:
            description = await self._handle.describe()
        except RPCError as error:
            if error.status is RPCStatusCode.NOT_FOUND:
                raise NotFound(f"no run with id '{self.run_id}'") from error
            return False
        return description.status is not WorkflowExecutionStatus.RUNNING

    async def approve(
        self,
        wait_id: str,
        actor: str,
        *,
        reject: bool = False,
        comment: str | None = None,
        key_file: str | None = None,
    ) -> DeliveryReceipt:
        """Approve (or reject) an APPROVAL wait; `key_file` signs as the actor."""
        return await self._signed_send(
            deliveries.approval(wait_id, actor, reject, comment), key_file
        )

    async def answer(
        self, wait_id: str, text: str, actor: str = "human:api", *, key_file: str | None = None
    ) -> DeliveryReceipt:
        """Answer a QUESTION wait in `text`."""
        return await self._signed_send(deliveries.answer(wait_id, text, actor), key_file)

    async def deliver(
        self,
        data: JsonValue,
        *,
        actor: str,
        wait_id: str | None = None,
        operation_id: str | None = None,
        event: str | None = None,
        key_file: str | None = None,
    ) -> DeliveryReceipt:
        """An async result, an external event or a reconcile, by wait, operation or event."""
        request = deliveries.delivery(wait_id, operation_id, event, data, actor)
        return await self._signed_send(request, key_file)

    async def cancel(
        self, reason: str = "cancelled through the API", actor: str = "human:api"
    ) -> None:
        """Cancel through Temporal: the run ends Canceled, finished results kept."""
        await self.send_cancel(deliveries.cancellation(reason, actor))

    async def send_cancel(self, request: CancelRequest) -> None:
        """A cancellation already made (and checked) with `deliveries.cancellation`."""
        await deliveries.cancel(self.harness.client, self.run_id, request)

    async def send(self, request: deliveries.Request) -> DeliveryReceipt:
        """A delivery already made (and checked) with `deliveries.approval`, `answer` or
        `delivery`, and signed (`signed_actors.signed`) if the run asks for signatures."""
        return await deliveries.send(self.harness.client, self.run_id, request)

    async def _signed_send(
        self, request: deliveries.Request, key_file: str | None
    ) -> DeliveryReceipt:
        """Signed with `key_file`, or $HARNESS_ACTOR_KEY_FILE, when either is given."""
        return await self.send(signed_actors.signed(request, self.run_id, key_file))
