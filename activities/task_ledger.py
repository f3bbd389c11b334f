"""Activity: a run's commands to its task's ledger, sent as the task's own updates, so the
gateway's answers land in the run's history too."""

from __future__ import annotations

import structlog
from temporalio import activity
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import FailureError
from temporalio.service import RPCError, RPCStatusCode

from harness.contracts import TASK_COMMAND_UPDATE, TASK_COMMANDS_ACTIVITY, task_workflow_id
from harness.messages import TaskCommandsRequest, TaskCommandsResult
from harness.task_commands import LedgerReceipt

log = structlog.get_logger()


class TaskLedgerActivities:
    def __init__(self, client: Client) -> None:
        self._client = client

    @activity.defn(name=TASK_COMMANDS_ACTIVITY)
    async def send(self, request: TaskCommandsRequest) -> TaskCommandsResult:
        """Each command in order. A refusal is an answer (the receipt says why), not a failure;
        a server that cannot be reached is, and Temporal retries: the commands carry
        idempotency keys, so a retry applies nothing twice."""
        receipts: list[LedgerReceipt] = []
        for command in request.commands:
            handle = self._client.get_workflow_handle(
                task_workflow_id(request.scope, command.task_id)
            )
            try:
                receipt: LedgerReceipt = await handle.execute_update(
                    TASK_COMMAND_UPDATE, command, result_type=LedgerReceipt
                )
            except WorkflowUpdateFailedError as error:
                cause = error.cause
                reason = cause.message if isinstance(cause, FailureError) else str(error)
                receipt = LedgerReceipt(accepted=False, reason=reason)
            except RPCError as error:
                if error.status is not RPCStatusCode.NOT_FOUND:
                    raise
                receipt = LedgerReceipt(accepted=False, reason=f"task gone: {error.message}")
            if not receipt.accepted:
                log.info(
                    "task.command_refused",
                    task_id=command.task_id,
                    op=command.operation.op,
                    reason=receipt.reason,
                )
            receipts.append(receipt)
        return TaskCommandsResult(receipts=receipts)
