"""One long-lived workflow per scope: its task graph, behind the gateway.

Creating a task and adding a dependency are the `scope_command` update (validator = the
graph's check, so a cycle across any number of tasks is refused before anything changes); a
created task's entity workflow starts as a child that outlives this one. Tasks report their
status changes by signal. Before the history grows large, the graph continues as new.
"""

from __future__ import annotations

from pydantic import BaseModel
from temporalio import workflow

from harness.contracts import (
    CONTRACT_IN_FORCE_QUERY,
    SCOPE_COMMAND_UPDATE,
    SCOPE_GRAPH_QUERY,
    SCOPE_RULES_QUERY,
    SCOPE_RULES_UPDATE,
    SCOPE_WORKFLOW,
    TASK_STATUS_SIGNAL,
    task_workflow_id,
)
from harness.host_contract import ContractInForce
from harness.scope_rules import InForceRequest, RulesCommand, ScopeRules, ScopeRulesState
from harness.task_commands import LedgerReceipt
from harness.task_graph import CreateTask, GraphCommand, StatusChanged, TaskGraph, TaskGraphState
from harness.task_ledger import TaskLedgerState
from harness.work import TaskRecord
from workflows import search_attributes
from workflows.history_limit import history_full
from workflows.task_entity import TaskStart, TaskWorkflow

HISTORY_EVENTS_BEFORE_NEW_RUN = 5000


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
        problem = self._graph.check(command)
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
    def rules_command(self, command: RulesCommand) -> LedgerReceipt:
        return self._rules.apply(command, workflow.now(), checked=True)

    @rules_command.validator
    def _check_rules(self, command: RulesCommand) -> None:
        problem = self._rules.check(command)
        if problem is not None:
            raise ValueError(problem)

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
    def task_status(self, command: GraphCommand) -> None:
        if isinstance(command.operation, StatusChanged) and self._graph.check(command) is None:
            self._graph.apply(command, workflow.now())

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
        await workflow.start_child_workflow(
            TaskWorkflow.run,
            TaskStart(ledger=TaskLedgerState(task=record)),
            id=task_workflow_id(scope, task_id),
            parent_close_policy=workflow.ParentClosePolicy.ABANDON,
            search_attributes=search_attributes.task_attributes(
                scope, record.status.value, record.parent_id
            ),
            static_summary=f"{scope}: {record.title}"[:200],
        )

    def _history_full(self) -> bool:
        return history_full(HISTORY_EVENTS_BEFORE_NEW_RUN)
