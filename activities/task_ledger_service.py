"""The task ledger as a service for activities (a run's reports to its task, the agent's
management tools): the worker's Temporal client sending the task's and the scope's own updates
and queries, by the names in harness.engine.contracts. A refusal is a receipt that says why, never
an
exception; a server that cannot be reached raises, and the activity is retried."""

from __future__ import annotations

from pydantic import BaseModel, JsonValue
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import FailureError
from temporalio.service import RPCError, RPCStatusCode

from harness.engine.contracts import (
    CONTRACT_IN_FORCE_QUERY,
    SCOPE_COMMAND_UPDATE,
    SCOPE_GRAPH_QUERY,
    SCOPE_RULES_QUERY,
    SCOPE_WORKFLOW,
    TASK_COMMAND_UPDATE,
    TASK_CONTEXT_QUERY,
    TASK_LEDGER_QUERY,
    TASK_SCOPE_CLAIM_UPDATE,
    TASK_STATUS_QUERY,
    WAITS_QUERY,
    scope_workflow_id,
    task_workflow_id,
)
from harness.governance.host_contract import Contract, ContractInForce, in_force
from harness.governance.scope_rules import InForceRequest, ScopeRulesState
from harness.governance.task_commands import LedgerReceipt, TaskCommand
from harness.governance.task_graph import GraphCommand, TaskGraphState
from harness.governance.task_ledger import ContextRequest, TaskContext, TaskLedgerState
from harness.governance.work import ScopeClaim, TaskStatus
from harness.waits.wait_book import Wait, WaitStatus


class TemporalTaskLedger:
    def __init__(self, client: Client, task_queue: str) -> None:
        self._client = client
        self._task_queue = task_queue

    async def task_command(self, scope: str, command: TaskCommand) -> LedgerReceipt:
        return await self._update(
            task_workflow_id(scope, command.task_id), TASK_COMMAND_UPDATE, command
        )

    async def scope_command(
        self, command: GraphCommand, *, start_scope: bool = False
    ) -> LedgerReceipt:
        """`start_scope` starts the scope's graph first if it has none (a run that works on no
        task creates one); a bound run's scope has its graph already."""
        workflow_id = scope_workflow_id(command.scope)
        if start_scope:
            await self._client.start_workflow(
                SCOPE_WORKFLOW,
                {"graph": {"scope": command.scope}},
                id=workflow_id,
                task_queue=self._task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                static_summary=f"task graph of scope {command.scope}",
            )
        return await self._update(workflow_id, SCOPE_COMMAND_UPDATE, command)

    async def claim_scope(self, run_id: str, scope: str) -> LedgerReceipt:
        """Ask the run (its own update, so two creates at once are decided in order) whether
        it may create its task in `scope`."""
        return await self._update(run_id, TASK_SCOPE_CLAIM_UPDATE, ScopeClaim(scope=scope))

    async def context(self, scope: str, task_id: str) -> TaskContext:
        handle = self._client.get_workflow_handle(task_workflow_id(scope, task_id))
        found: TaskContext = await handle.query(
            TASK_CONTEXT_QUERY, ContextRequest(), result_type=TaskContext
        )
        return found

    async def ledger(self, scope: str, task_id: str) -> TaskLedgerState:
        handle = self._client.get_workflow_handle(task_workflow_id(scope, task_id))
        state: TaskLedgerState = await handle.query(TASK_LEDGER_QUERY, result_type=TaskLedgerState)
        return state

    async def status(self, scope: str, task_id: str) -> TaskStatus | None:
        """The status the task's own workflow holds; None when it has none."""
        handle = self._client.get_workflow_handle(task_workflow_id(scope, task_id))
        try:
            status: TaskStatus = await handle.query(TASK_STATUS_QUERY, result_type=TaskStatus)
        except RPCError as error:
            if error.status is not RPCStatusCode.NOT_FOUND:
                raise
            return None
        return status

    async def ledger_if_any(self, scope: str, task_id: str) -> TaskLedgerState | None:
        try:
            return await self.ledger(scope, task_id)
        except RPCError as error:
            if error.status is not RPCStatusCode.NOT_FOUND:
                raise
            return None

    async def contract_in_force(self, scope: str, preset: str | None) -> ContractInForce:
        """A scope that has no workflow yet has the default contract and no rules."""
        handle = self._client.get_workflow_handle(scope_workflow_id(scope))
        try:
            found: ContractInForce = await handle.query(
                CONTRACT_IN_FORCE_QUERY, InForceRequest(preset=preset), result_type=ContractInForce
            )
        except RPCError as error:
            if error.status is not RPCStatusCode.NOT_FOUND:
                raise
            return in_force(Contract(), [], scope, preset)
        return found

    async def actor_keys(self, scope: str) -> dict[str, str]:
        """The scope's actor keys; a scope that has no workflow has none."""
        handle = self._client.get_workflow_handle(scope_workflow_id(scope))
        try:
            state: ScopeRulesState = await handle.query(
                SCOPE_RULES_QUERY, result_type=ScopeRulesState
            )
        except RPCError as error:
            if error.status is not RPCStatusCode.NOT_FOUND:
                raise
            return {}
        return state.actor_keys

    async def graph(self, scope: str) -> TaskGraphState:
        handle = self._client.get_workflow_handle(scope_workflow_id(scope))
        state: TaskGraphState = await handle.query(SCOPE_GRAPH_QUERY, result_type=TaskGraphState)
        return state

    async def open_waits(self, run_ids: list[str]) -> list[dict[str, JsonValue]]:
        """The pending waits of these runs (a run that cannot be asked is left out)."""
        found: list[dict[str, JsonValue]] = []
        for run_id in run_ids:
            try:
                waits: list[Wait] = await self._client.get_workflow_handle(run_id).query(
                    WAITS_QUERY, result_type=list[Wait]
                )
            except RPCError:
                continue
            found += [
                {"run_id": run_id, "wait_id": w.id, "kind": w.kind.value, "prompt": w.prompt}
                for w in waits
                if w.status is WaitStatus.PENDING
            ]
        return found

    async def _update(self, workflow_id: str, name: str, command: BaseModel) -> LedgerReceipt:
        handle = self._client.get_workflow_handle(workflow_id)
        try:
            receipt: LedgerReceipt = await handle.execute_update(
                name, command, result_type=LedgerReceipt
            )
        except WorkflowUpdateFailedError as error:
            cause = error.cause
            reason = cause.message if isinstance(cause, FailureError) else str(error)
            return LedgerReceipt(accepted=False, reason=reason)
        except RPCError as error:
            if error.status is not RPCStatusCode.NOT_FOUND:
                raise
            return LedgerReceipt(accepted=False, reason=f"{workflow_id}: {error.message}")
        return receipt
