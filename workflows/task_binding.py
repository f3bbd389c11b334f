"""A run bound to a task tells the task's ledger what it did: that it works on the task, each
node it finished (TOOL evidence, by reference to the run and node, never a copy of the result),
and how it ended. Runs without a task send nothing, so their histories are as before.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from harness.contracts import TASK_COMMANDS_ACTIVITY
from harness.dag import NodeStatus
from harness.messages import TaskCommandsRequest, TaskCommandsResult
from harness.node_ledger import NodeLedger
from harness.run import TaskBinding
from harness.task_commands import BindRun, RecordEvidence, RunEnded, TaskCommand, TaskOperation
from harness.work import EvidenceKind

HARNESS_ACTOR = "system:harness"
TASK_COMMANDS_TIMEOUT = timedelta(seconds=30)
TASK_COMMANDS_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)


class TaskReporter:
    def __init__(self, binding: TaskBinding | None, run_id: str) -> None:
        self._binding = binding
        self._run_id = run_id

    async def bound(self) -> None:
        await self._send([(BindRun(run_id=self._run_id), f"{self._run_id}:bind")])

    async def finished_nodes(self, ledger: NodeLedger, attempt: int) -> None:
        """Every node the attempt finished, once: the key names run, attempt and node."""
        commands: list[tuple[TaskOperation, str]] = []
        for node_id, outcome in ledger.outcomes.items():
            if outcome.status is not NodeStatus.DONE or outcome.reused:
                continue
            evidence = RecordEvidence(
                kind=EvidenceKind.TOOL,
                summary=f"{outcome.tool} result of node {node_id}",
                content_ref=f"run:{self._run_id}/node:{node_id}",
                run_id=self._run_id,
                node_id=node_id,
            )
            commands.append((evidence, f"{self._run_id}:{attempt}:{node_id}"))
        await self._send(commands)

    async def ended(self, status: str) -> None:
        await self._send([(RunEnded(run_id=self._run_id, status=status), f"{self._run_id}:end")])

    async def _send(self, operations: list[tuple[TaskOperation, str]]) -> None:
        if self._binding is None or not operations:
            return
        binding = self._binding
        commands = [
            TaskCommand(
                task_id=binding.task_id,
                actor=HARNESS_ACTOR,
                operation=operation,
                idempotency_key=key,
            )
            for operation, key in operations
        ]
        result: TaskCommandsResult = await workflow.execute_activity(
            TASK_COMMANDS_ACTIVITY,
            TaskCommandsRequest(scope=binding.scope, commands=commands),
            result_type=TaskCommandsResult,
            start_to_close_timeout=TASK_COMMANDS_TIMEOUT,
            retry_policy=TASK_COMMANDS_RETRY,
            summary=f"task {binding.task_id}: {operations[0][0].op} x{len(operations)}",
        )
        refused = [r.reason for r in result.receipts if not r.accepted]
        if refused:
            workflow.logger.warning("task.commands_refused", extra={"reasons": refused})
