"""One long-lived workflow per task: its ledger, behind the gateway.

Every change is the `task_command` update: its validator is the gateway's check (a refused
command leaves no event in history), its handler the gateway's apply (the history is the
journal). Queries read. The task tells its scope's graph when its status changes, so the
graph knows which tasks are runnable. Before its history grows large it continues as new,
carrying its ledger (small records, evidence by reference). A finished task closes once every
run bound to it has said how it ended, or a day after it finished.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta

from pydantic import BaseModel
from temporalio import workflow
from temporalio.exceptions import ApplicationError

from harness.contracts import (
    TASK_COMMAND_UPDATE,
    TASK_CONTEXT_QUERY,
    TASK_LEDGER_QUERY,
    TASK_STATUS_SIGNAL,
    TASK_WORKFLOW,
    scope_workflow_id,
)
from harness.task_commands import LedgerReceipt, TaskCommand
from harness.task_graph import GraphCommand, StatusChanged
from harness.task_ledger import ContextRequest, TaskContext, TaskLedger, TaskLedgerState
from harness.work import TaskRecord
from workflows import search_attributes

HISTORY_EVENTS_BEFORE_NEW_RUN = 5000
"""Well inside Temporal's 50k events and 50 MB, whatever the server suggests earlier."""
FINISHED_GRACE = timedelta(days=1)
"""How long a finished task stays open for its bound runs to report how they ended."""
SYSTEM_ACTOR = "system:harness"


class TaskStart(BaseModel):
    ledger: TaskLedgerState


@workflow.defn(name=TASK_WORKFLOW)
class TaskWorkflow:
    @workflow.init
    def __init__(self, start: TaskStart) -> None:
        self._ledger = TaskLedger(start.ledger)

    @workflow.run
    async def run(self, start: TaskStart) -> TaskRecord:
        await workflow.wait_condition(lambda: self._finished() or self._history_full())
        if not self._history_full():
            with contextlib.suppress(TimeoutError):  # the runs had their day to report
                await workflow.wait_condition(
                    lambda: self._runs_reported() or self._history_full(),
                    timeout=FINISHED_GRACE,
                )
        await workflow.wait_condition(workflow.all_handlers_finished)
        if self._history_full():
            workflow.continue_as_new(TaskStart(ledger=self._ledger.state))
        return self._ledger.task

    @workflow.update(
        name=TASK_COMMAND_UPDATE,
        description="Change the task's ledger: a TaskCommand (actor, operation, idempotency "
        "key); refused before anything changes when the gateway says no.",
    )
    async def command(self, command: TaskCommand) -> LedgerReceipt:
        before = self._ledger.task.status
        receipt = self._ledger.apply(command, workflow.now(), checked=True)
        task = self._ledger.task
        if task.status is not before:  # a status, a submission, a review or a completion
            search_attributes.upsert_task_status(task.status.value)
            await self._tell_graph()
        return receipt

    @command.validator
    def _check(self, command: TaskCommand) -> None:
        problem = self._ledger.check(command)
        if problem is not None:
            raise ValueError(problem)

    @workflow.query(name=TASK_CONTEXT_QUERY, description="The task, what is believed and why.")
    def context(self, request: ContextRequest) -> TaskContext:
        return self._ledger.context(request.recent_evidence)

    @workflow.query(name=TASK_LEDGER_QUERY, description="The task's whole ledger.")
    def ledger(self) -> TaskLedgerState:
        return self._ledger.state

    async def _tell_graph(self) -> None:
        task = self._ledger.task
        graph = workflow.get_external_workflow_handle(scope_workflow_id(task.scope))
        change = StatusChanged(task_id=task.id, status=task.status)
        try:
            await graph.signal(
                TASK_STATUS_SIGNAL,
                GraphCommand(scope=task.scope, actor=SYSTEM_ACTOR, operation=change),
            )
        except ApplicationError as error:  # the graph is gone: the task's status stands
            workflow.logger.warning("task.graph_unreachable", extra={"error": str(error)})

    def _finished(self) -> bool:
        return self._ledger.task.status.is_terminal

    def _runs_reported(self) -> bool:
        return all(run.ended is not None for run in self._ledger.task.runs)

    def _history_full(self) -> bool:
        info = workflow.info()
        return (
            info.is_continue_as_new_suggested()
            or info.get_current_history_length() >= HISTORY_EVENTS_BEFORE_NEW_RUN
        )
