"""Activity: a run's commands to its task's ledger, sent as the task's own updates, so the
gateway's answers land in the run's history too."""

from __future__ import annotations

import structlog
from temporalio import activity

from activities.task_ledger_service import TemporalTaskLedger
from harness.engine.contracts import TASK_COMMANDS_ACTIVITY
from harness.engine.messages import TaskCommandsRequest, TaskCommandsResult
from harness.governance.task_commands import LedgerReceipt

log = structlog.get_logger()


class TaskLedgerActivities:
    def __init__(self, ledger: TemporalTaskLedger) -> None:
        self._ledger = ledger

    @activity.defn(name=TASK_COMMANDS_ACTIVITY)
    async def send(self, request: TaskCommandsRequest) -> TaskCommandsResult:
        """Each command in order. A refusal is an answer (the receipt says why), not a failure;
        a server that cannot be reached is, and Temporal retries: the commands carry
        idempotency keys, so a retry applies nothing twice."""
        receipts: list[LedgerReceipt] = []
        for command in request.commands:
            receipt = await self._ledger.task_command(request.scope, command)
            if not receipt.accepted:
                log.info(
                    "task.command_refused",
                    task_id=command.task_id,
                    op=command.operation.op,
                    reason=receipt.reason,
                )
            receipts.append(receipt)
        return TaskCommandsResult(receipts=receipts)
