"""Tasks from a program: the calls the `harness task|fact|evidence|decision|context` commands
make, and that an application can make itself.

Writes are updates, so a refused command raises TaskRefused (an InvalidInput) with the
gateway's one-line reason and changes nothing; a task or scope that does not exist is NotFound;
a server without the tasks' search attributes is InvalidInput, with the command that adds them.
Reads are queries on the task's or the scope's workflow, and listings go through Temporal's
visibility. The public face of these calls is `durable_harness.tasks.Tasks`.
"""

from __future__ import annotations

import asyncio

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import FailureError
from temporalio.service import RPCError, RPCStatusCode

from durable_harness.exceptions import HarnessError, InvalidInput, NotFound, TaskRefused
from harness.engine.contracts import (
    CONTRACT_IN_FORCE_QUERY,
    SCOPE_COMMAND_UPDATE,
    SCOPE_GRAPH_QUERY,
    SCOPE_RULES_QUERY,
    SCOPE_RULES_UPDATE,
    TASK_COMMAND_UPDATE,
    TASK_CONTEXT_QUERY,
    TASK_LEDGER_QUERY,
    scope_workflow_id,
    task_workflow_id,
)
from harness.governance.host_contract import Contract, ContractInForce, in_force
from harness.governance.scope_rules import InForceRequest, RulesCommand, ScopeRulesState
from harness.governance.task_commands import LedgerReceipt, TaskCommand
from harness.governance.task_graph import GraphCommand, TaskGraphState
from harness.governance.task_ledger import ContextRequest, TaskContext, TaskLedgerState
from harness.governance.work import TaskStatus
from workflows import ScopeWorkflow, search_attributes
from workflows.scope_graph import ScopeStart

MAX_LISTED = 1000
ABORTED_UPDATE_ATTEMPTS = 5


async def check_search_attributes(client: Client) -> None:
    from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest

    response = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace)
    )
    known = response.custom_attributes
    missing = [key.name for key in search_attributes.TASK_KEYS if key.name not in known]
    if missing:
        raise InvalidInput(
            f"this Temporal server lacks the search attributes {', '.join(missing)} that tasks "
            "are listed by; `harness server` registers them (elsewhere: temporal operator "
            "search-attribute create --name NAME --type Keyword)"
        )


async def scope_command(client: Client, task_queue: str, command: GraphCommand) -> LedgerReceipt:
    """Create a task or add a dependency; starts the scope's graph the first time."""
    workflow_id = await _scope(client, task_queue, command.scope)
    return await _update(workflow_id, client, SCOPE_COMMAND_UPDATE, command)


async def rules_command(client: Client, task_queue: str, command: RulesCommand) -> LedgerReceipt:
    """Set the scope's contract, or propose, resolve or promote a lesson, or revoke a rule."""
    workflow_id = await _scope(client, task_queue, command.scope)
    return await _update(workflow_id, client, SCOPE_RULES_UPDATE, command)


async def _scope(client: Client, task_queue: str, scope: str) -> str:
    """The scope's workflow, started the first time anything is asked of it."""
    await check_search_attributes(client)
    handle = await client.start_workflow(
        ScopeWorkflow.run,
        ScopeStart(graph=TaskGraphState(scope=scope)),
        id=scope_workflow_id(scope),
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        static_summary=f"task graph of scope {scope}",
    )
    return handle.id


async def scope_rules(client: Client, scope: str) -> ScopeRulesState:
    """The scope's contract, lessons and rules; a scope nobody used has the defaults."""
    try:
        state: ScopeRulesState = await client.get_workflow_handle(scope_workflow_id(scope)).query(
            SCOPE_RULES_QUERY, result_type=ScopeRulesState
        )
    except RPCError as error:
        if error.status is RPCStatusCode.NOT_FOUND:
            return ScopeRulesState()
        raise
    return state


async def contract_in_force(client: Client, scope: str, preset: str | None) -> ContractInForce:
    """What a task of this preset is held to: the base contract, its preset, the rules."""
    try:
        found: ContractInForce = await client.get_workflow_handle(scope_workflow_id(scope)).query(
            CONTRACT_IN_FORCE_QUERY, InForceRequest(preset=preset), result_type=ContractInForce
        )
    except RPCError as error:
        if error.status is RPCStatusCode.NOT_FOUND:
            return in_force(Contract(), [], scope, preset)
        raise
    return found


async def task_command(client: Client, scope: str, command: TaskCommand) -> LedgerReceipt:
    return await _update(
        task_workflow_id(scope, command.task_id), client, TASK_COMMAND_UPDATE, command
    )


async def _update(
    workflow_id: str,
    client: Client,
    name: str,
    command: GraphCommand | TaskCommand | RulesCommand,
) -> LedgerReceipt:
    try:
        receipt: LedgerReceipt = await _send_update(workflow_id, client, name, command)
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        raise TaskRefused(
            cause.message if isinstance(cause, FailureError) else str(error)
        ) from error
    except RPCError as error:
        raise await _why_closed(client, workflow_id, error) from error
    return receipt


async def _send_update(
    workflow_id: str,
    client: Client,
    name: str,
    command: GraphCommand | TaskCommand | RulesCommand,
) -> LedgerReceipt:
    """An update the server aborts before the workflow took it (the workflow was continuing as
    new: UNAVAILABLE, "workflow update was aborted") is sent again, to the new run; nothing
    was applied, and its idempotency key would make a second apply a duplicate anyway."""
    handle = client.get_workflow_handle(workflow_id)
    attempt = 1
    while True:
        try:
            receipt: LedgerReceipt = await handle.execute_update(
                name, command, result_type=LedgerReceipt
            )
            return receipt
        except RPCError as error:
            aborted = error.status is RPCStatusCode.UNAVAILABLE and "aborted" in error.message
            if not aborted or attempt == ABORTED_UPDATE_ATTEMPTS:
                raise
        await asyncio.sleep(0.1 * attempt)
        attempt += 1


async def _why_closed(client: Client, workflow_id: str, error: RPCError) -> HarnessError:
    """A finished task's workflow has closed: say so as the gateway would have."""
    if error.status is RPCStatusCode.NOT_FOUND and "completed" in error.message:
        try:
            state: TaskLedgerState = await client.get_workflow_handle(workflow_id).query(
                TASK_LEDGER_QUERY, result_type=TaskLedgerState
            )
        except RPCError:
            return TaskRefused(error.message)
        task = state.task
        return TaskRefused(f"task '{task.id}' is {task.status.value}: a finished task is final")
    return _not_found(workflow_id, error)


async def context(client: Client, scope: str, task_id: str, recent: int = 20) -> TaskContext:
    try:
        found: TaskContext = await client.get_workflow_handle(
            task_workflow_id(scope, task_id)
        ).query(TASK_CONTEXT_QUERY, ContextRequest(recent_evidence=recent), result_type=TaskContext)
    except RPCError as error:
        raise _not_found(task_workflow_id(scope, task_id), error) from error
    return found


async def ledger(client: Client, scope: str, task_id: str) -> TaskLedgerState:
    try:
        state: TaskLedgerState = await client.get_workflow_handle(
            task_workflow_id(scope, task_id)
        ).query(TASK_LEDGER_QUERY, result_type=TaskLedgerState)
    except RPCError as error:
        raise _not_found(task_workflow_id(scope, task_id), error) from error
    return state


async def graph(client: Client, scope: str) -> TaskGraphState:
    try:
        state: TaskGraphState = await client.get_workflow_handle(scope_workflow_id(scope)).query(
            SCOPE_GRAPH_QUERY, result_type=TaskGraphState
        )
    except RPCError as error:
        raise _not_found(scope_workflow_id(scope), error) from error
    return state


async def listed(client: Client, scope: str, status: TaskStatus | None) -> list[tuple[str, str]]:
    """(task id, status) of the scope's tasks, through visibility, newest first."""
    query = f'WorkflowType = "HarnessTask" AND HarnessTaskScope = "{scope}"'
    if status is not None:
        query += f' AND HarnessTaskStatus = "{status.value}"'
    found: list[tuple[str, str]] = []
    async for execution in client.list_workflows(query, limit=MAX_LISTED):
        task_status = execution.typed_search_attributes.get(search_attributes.TASK_STATUS)
        found.append((execution.id.removeprefix(f"{scope}/"), task_status or "?"))
    return found


def _not_found(workflow_id: str, error: RPCError) -> HarnessError:
    """NotFound for a task or scope the server has no workflow of; any other failure of the
    server is the command's refusal in the server's words (exit 2, as it always was)."""
    if error.status is RPCStatusCode.NOT_FOUND:
        scope, _, name = workflow_id.partition("/")
        if name == "tasks":
            return NotFound(f"scope '{scope}' has no tasks yet")
        return NotFound(f"scope '{scope}' has no task '{name}'")
    return TaskRefused(error.message)
