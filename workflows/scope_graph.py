"""One long-lived workflow per scope: its task graph, behind the gateway.

Creating a task and adding a dependency are the `scope_command` update (validator = the
graph's check, so a cycle across any number of tasks is refused before anything changes); a
created task's entity workflow starts as a child that outlives this one. Tasks report their
status changes by signal. Before the history grows large, the graph continues as new.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from harness.engine.contracts import (
    CONTRACT_IN_FORCE_QUERY,
    SCOPE_COMMAND_UPDATE,
    SCOPE_GRAPH_QUERY,
    SCOPE_RULES_QUERY,
    SCOPE_RULES_UPDATE,
    SCOPE_TASK_STATUS_ACTIVITY,
    SCOPE_WORKFLOW,
    TASK_KEYS_SIGNAL,
    TASK_STATUS_SIGNAL,
    task_workflow_id,
)
from harness.engine.messages import TaskStatusRead, TaskStatusRequest
from harness.governance.governance_keys import governance_problem
from harness.governance.host_contract import ContractInForce
from harness.governance.scope_rules import (
    InForceRequest,
    RulesCommand,
    ScopeRules,
    ScopeRulesState,
    SetKeys,
)
from harness.governance.task_commands import LedgerReceipt
from harness.governance.task_graph import (
    CreateTask,
    GraphCommand,
    StatusChanged,
    TaskGraph,
    TaskGraphState,
)
from harness.governance.task_ledger import TaskLedgerState
from harness.governance.work import TaskRecord
from workflows import search_attributes
from workflows.actor_signatures import verify
from workflows.history_limit import history_full
from workflows.patches import KEYS_TOLD_PATCH, STATUS_READ_PATCH
from workflows.task_entity import TaskStart, TaskWorkflow

HISTORY_EVENTS_BEFORE_NEW_RUN = 5000
STATUS_READ_TIMEOUT = timedelta(seconds=60)
STATUS_READ_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)


class ScopeStart(BaseModel):
    graph: TaskGraphState
    rules: ScopeRulesState | None = None
    """The scope's contract, lessons and rules (None: the default contract, no lessons)."""


@workflow.defn(name=SCOPE_WORKFLOW)
class ScopeWorkflow:
    @workflow.init
    def __init__(self, start: ScopeStart) -> None:
        self._graph = TaskGraph(start.graph)
        self._rules = ScopeRules(start.graph.scope, start.rules or ScopeRulesState())
        self._status_asked: dict[str, int] = {}
        self._status_applied: dict[str, int] = {}

    @workflow.run
    async def run(self, start: ScopeStart) -> None:
        await workflow.wait_condition(self._history_full)
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(ScopeStart(graph=self._graph.state, rules=self._rules.state))

    @workflow.update(
        name=SCOPE_COMMAND_UPDATE,
        description="Create a task or add a dependency: a GraphCommand; refused before "
        "anything changes when it would close a cycle or names what does not exist.",
    )
    async def command(self, command: GraphCommand) -> LedgerReceipt:
        receipt = self._graph.apply(command, workflow.now(), checked=True)
        created = receipt.accepted and not receipt.duplicate
        if created and receipt.id is not None and isinstance(command.operation, CreateTask):
            await self._start_task(receipt.id)
        return receipt

    @command.validator
    def _check(self, command: GraphCommand) -> None:
        if isinstance(command.operation, StatusChanged):
            raise ValueError("a task's status is changed on the task, which tells its graph")
        problem = self._graph.check(command) or self._unsigned(command)
        operation = command.operation
        creates = isinstance(operation, CreateTask) and not self._graph.seen(command)
        if problem is None and creates:
            problem = self._rules.preset_problem(command)
        if problem is not None:
            raise ValueError(problem)

    @workflow.update(
        name=SCOPE_RULES_UPDATE,
        description="Set the scope's contract, or propose, resolve or promote a lesson, or "
        "revoke a rule: a RulesCommand; refused before anything changes when the gateway "
        "says no.",
    )
    async def rules_command(self, command: RulesCommand) -> LedgerReceipt:
        receipt = self._rules.apply(command, workflow.now(), checked=True)
        new_keys = isinstance(command.operation, SetKeys) and not receipt.duplicate
        if new_keys and workflow.patched(KEYS_TOLD_PATCH):
            await self._tell_tasks_of_keys()
        return receipt

    @rules_command.validator
    def _check_rules(self, command: RulesCommand) -> None:
        problem = self._rules.check(command) or self._unsigned(command)
        if problem is not None:
            raise ValueError(problem)

    def _unsigned(self, command: GraphCommand | RulesCommand) -> str | None:
        """Where the scope has actor keys, whose command this may be
        (harness.governance.governance_keys).
        A validator only: nothing before 0.10 was refused by it, and a refusal leaves no event."""
        scope = self._graph.state.scope
        return governance_problem(scope, None, command, self._rules.state.actor_keys, verify)

    async def _tell_tasks_of_keys(self) -> None:
        """Every unfinished task reads the scope's keys again (a task keeps them in its own
        state, so its validator can check a signature without asking anyone)."""
        unfinished = [t.id for t in self._graph.state.tasks.values() if not t.status.is_terminal]
        await asyncio.gather(*(self._tell_task(task_id) for task_id in unfinished))

    async def _tell_task(self, task_id: str) -> None:
        scope = self._graph.state.scope
        task = workflow.get_external_workflow_handle(task_workflow_id(scope, task_id))
        try:
            await task.signal(TASK_KEYS_SIGNAL)
        except ApplicationError as error:  # the task has closed: nothing of it to check
            workflow.logger.warning("scope.task_unreachable", extra={"error": str(error)})

    @workflow.query(name=SCOPE_RULES_QUERY, description="The scope's contract, lessons and rules.")
    def rules(self) -> ScopeRulesState:
        return self._rules.state

    @workflow.query(
        name=CONTRACT_IN_FORCE_QUERY,
        description="The contract a task of this preset is held to: base, preset and rules.",
    )
    def contract_in_force(self, request: InForceRequest) -> ContractInForce:
        return self._rules.in_force(request.preset)

    @workflow.signal(
        name=TASK_STATUS_SIGNAL, description="A task of this scope reports its new status."
    )
    async def task_status(self, command: GraphCommand) -> None:
        """The news that a task's status changed: anyone may send this signal, so since 0.10
        the graph takes the status the task's own workflow holds (read by an activity, so the
        history holds it), never the one the signal says. Of reads that overlap for one task,
        the last one asked wins."""
        operation = command.operation
        if not isinstance(operation, StatusChanged):
            return
        if not workflow.patched(STATUS_READ_PATCH):
            if self._graph.check(command) is None:
                self._graph.apply(command, workflow.now())
            return
        task_id = operation.task_id
        if task_id not in self._graph.state.tasks:
            return
        asked = self._status_asked.get(task_id, 0) + 1
        self._status_asked[task_id] = asked
        scope = self._graph.state.scope
        try:
            read: TaskStatusRead = await workflow.execute_activity(
                SCOPE_TASK_STATUS_ACTIVITY,
                TaskStatusRequest(scope=scope, task_id=task_id),
                result_type=TaskStatusRead,
                start_to_close_timeout=STATUS_READ_TIMEOUT,
                retry_policy=STATUS_READ_RETRY,
                summary=f"scope {scope}: the status of task {task_id}",
            )
        except ActivityError as error:  # the graph keeps what it had; said in the log
            workflow.logger.warning("scope.task_status_unread", extra={"error": str(error)})
            return
        if read.status is None or asked < self._status_applied.get(task_id, 0):
            return
        self._status_applied[task_id] = asked
        change = command.model_copy(
            update={"operation": StatusChanged(task_id=task_id, status=read.status)}
        )
        if self._graph.check(change) is None:
            self._graph.apply(change, workflow.now())

    @workflow.query(name=SCOPE_GRAPH_QUERY, description="The scope's tasks and their edges.")
    def graph(self) -> TaskGraphState:
        return self._graph.state

    async def _start_task(self, task_id: str) -> None:
        node = self._graph.state.tasks[task_id]
        scope = self._graph.state.scope
        record = TaskRecord(
            id=node.id,
            scope=scope,
            title=node.title,
            parent_id=node.parent_id,
            preset=node.preset,
            created_by=node.created_by,
            created_at=node.created_at,
        )
        keys = self._rules.state.actor_keys or None  # a task checks signatures by them
        await workflow.start_child_workflow(
            TaskWorkflow.run,
            TaskStart(ledger=TaskLedgerState(task=record), actor_keys=keys),
            id=task_workflow_id(scope, task_id),
            parent_close_policy=workflow.ParentClosePolicy.ABANDON,
            search_attributes=search_attributes.task_attributes(
                scope, record.status.value, record.parent_id
            ),
            static_summary=f"{scope}: {record.title}"[:200],
        )

    def _history_full(self) -> bool:
        return history_full(HISTORY_EVENTS_BEFORE_NEW_RUN)
