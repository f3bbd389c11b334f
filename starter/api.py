"""The Python API, for applications: connect, start a run, follow it, deliver what it waits
for, and read its result. The same runs as the CLI's (the same request, the same search
attributes, the same id form) and the same receipts.

    harness = await Harness.connect()                 # or connect(address=..., profile=...)
    run = await harness.start("Compare Paris and Tokyo", session_id="s-1")
    async for event in run.progress():               # trace events as they happen
        ...
    result = await run.result()                      # the RunResult, whatever the ending

Errors are `starter.errors.CliError`: one line that says what went wrong, and an exit code a
command line would use.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from harness.contracts import ANSWER_UPDATE, APPROVE_UPDATE, DELIVER_UPDATE
from harness.deliveries import AnswerRequest, ApprovalRequest, DeliverRequest
from harness.run import RunRequest, RunResult, RunStatus
from harness.trace import TraceEvent
from harness.wait_book import Decision, DeliveryReceipt, Wait
from infra.settings import Settings, SettingsError
from starter import runs
from starter.cli_connection import environment_with
from starter.errors import CliError
from starter.progress import new_events
from starter.run_results import result_of
from workflows import AgentRunWorkflow

PROGRESS_POLL_SECONDS = 0.5
"""How often `progress` asks the run for its trace: a query, which adds nothing to history."""


@dataclass(frozen=True)
class Harness:
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
            raise CliError(str(error)) from error
        return cls(await runs.client_for(settings), settings)

    async def start(self, goal: str, *, run_id: str | None = None, **options: Any) -> Run:
        """Start a run; `options` are RunRequest's fields (scenario, plan, session_id, limits,
        memory, provider, max_replans, ...). Refused in one line when out of range."""
        request = runs.check_request(RunRequest(goal=goal, **options))
        run_id = run_id or runs.new_run_id()
        await runs.start_run(self.client, self.settings, request, run_id)
        return self.run(run_id)

    def run(self, run_id: str) -> Run:
        """A run already started, by its id."""
        return Run(self, run_id)


@dataclass(frozen=True)
class Run:
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
        try:
            return await result_of(self.harness.client, self._handle)
        except WorkflowFailureError as error:
            raise CliError(f"run {self.run_id} failed inside Temporal: {error.cause}") from error

    async def status(self) -> RunStatus | RunResult:
        """The live status of a running run; the result of a finished one."""
        return await runs.run_status(self.harness.client, self.run_id)

    async def trace(self) -> list[TraceEvent]:
        events: list[TraceEvent] = await self._handle.query(AgentRunWorkflow.trace)
        return events

    async def waits(self) -> list[Wait]:
        found: list[Wait] = await self._handle.query(AgentRunWorkflow.waits)
        return found

    async def progress(self) -> AsyncIterator[TraceEvent]:
        """Each trace event once, as the run records it, until its workflow closes (however it
        closes: finished, terminated, timed out). Polls a query (nothing in history) every
        PROGRESS_POLL_SECONDS; a run not started yet, or a failing workflow task, is asked
        again."""
        shown: set[str] = set()
        while True:
            closed = await self._closed()
            try:
                events = await self.trace()
            except (RPCError, WorkflowQueryFailedError):
                events = []
            for event in new_events(events, shown):
                yield event
            if closed:
                return
            await asyncio.sleep(PROGRESS_POLL_SECONDS)

    async def _closed(self) -> bool:
        try:
            description = await self._handle.describe()
        except RPCError as error:
            if error.status is RPCStatusCode.NOT_FOUND:
                raise CliError(f"no run with id '{self.run_id}'") from error
            return False
        return description.status is not WorkflowExecutionStatus.RUNNING

    async def approve(
        self, wait_id: str, actor: str, *, reject: bool = False, comment: str | None = None
    ) -> DeliveryReceipt:
        decision = Decision.REJECT if reject else Decision.APPROVE
        request = ApprovalRequest(wait_id=wait_id, decision=decision, actor=actor, comment=comment)
        return await self._update(APPROVE_UPDATE, request)

    async def answer(self, wait_id: str, text: str, actor: str = "human:api") -> DeliveryReceipt:
        return await self._update(
            ANSWER_UPDATE, AnswerRequest(wait_id=wait_id, text=text, actor=actor)
        )

    async def deliver(
        self,
        data: JsonValue,
        *,
        actor: str,
        wait_id: str | None = None,
        operation_id: str | None = None,
        event: str | None = None,
    ) -> DeliveryReceipt:
        request = DeliverRequest(
            wait_id=wait_id, operation_id=operation_id, event=event, data=data, actor=actor
        )
        return await self._update(DELIVER_UPDATE, request)

    async def cancel(self, reason: str = "cancelled through the API") -> None:
        """Cancel through Temporal: the run ends Canceled, finished results kept."""
        await self._handle.cancel(reason=reason)

    async def _update(self, name: str, request: Any) -> DeliveryReceipt:
        receipt: DeliveryReceipt = await self._handle.execute_update(
            name, request, result_type=DeliveryReceipt
        )
        return receipt
