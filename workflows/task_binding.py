"""A run bound to a task tells the task's ledger what it did: that it works on the task, each
node it finished (TOOL evidence, by reference to the run and node, never a copy of the result),
and how it ended. Runs without a task send nothing, so their histories are as before.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

from harness.engine.contracts import TASK_COMMANDS_ACTIVITY, TASK_MANAGE_TOOL
from harness.engine.dag import NodeStatus
from harness.engine.messages import TaskCommandsRequest, TaskCommandsResult
from harness.engine.node_evidence import node_evidence
from harness.engine.node_ledger import NodeLedger
from harness.governance.task_commands import (
    BindRun,
    RecordEvidence,
    RunEnded,
    Submit,
    TaskCommand,
    TaskOperation,
)
from harness.governance.work import EvidenceKind, TaskBinding
from harness.waits.wait_book import Decision, Wait, WaitKind, WaitStatus
from workflows.activity_calls.failures import raise_if_cancelled

HARNESS_ACTOR = "system:harness"
"""Who the run's own reports are from; their idempotency keys start `harness:`, the agent's
(the management tools') `agent:`, so neither can take the other's."""
SUBMISSION_SUMMARY_CHARS = 500
TASK_COMMANDS_TIMEOUT = timedelta(seconds=30)
TASK_COMMANDS_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)


class TaskReporter:
    def __init__(self, binding: TaskBinding | None, run_id: str) -> None:
        self._binding = binding
        self._run_id = run_id

    @property
    def binding(self) -> TaskBinding | None:
        return self._binding

    async def bound(self) -> None:
        await self._send([(BindRun(run_id=self._run_id), f"harness:{self._run_id}:bind")])

    async def adopt_created(self, ledger: NodeLedger) -> None:
        """A run that works on no task and created one (harness_task_manage create) is bound
        to it from then on: its evidence, its later attempts and its ending go there."""
        if self._binding is not None:
            return
        for outcome in ledger.outcomes.values():
            result = outcome.result
            if (
                outcome.tool == TASK_MANAGE_TOOL
                and outcome.status is NodeStatus.DONE
                and isinstance(result, dict)
                and result.get("bound") is True
                and isinstance(result.get("task_id"), str)
                and isinstance(result.get("scope"), str)
            ):
                self._binding = TaskBinding(
                    scope=str(result["scope"]), task_id=str(result["task_id"])
                )
                await self.bound()
                return

    async def finished_nodes(self, ledger: NodeLedger, attempt: int, waits: list[Wait]) -> None:
        """Every node the attempt finished (TOOL evidence), and every approval given or
        refused for one of its nodes (EXTERNAL evidence), once each."""
        if self._binding is None:
            return  # nothing would be sent: not even build the commands of 20,000 nodes
        commands: list[tuple[TaskOperation, str]] = []
        for node_id, outcome in ledger.outcomes.items():
            if outcome.status is NodeStatus.DONE and not outcome.reused:
                commands.append(node_evidence(self._run_id, attempt, node_id, outcome.tool))
        for wait in waits:
            approved_here = wait.kind is WaitKind.APPROVAL and wait.node_id in ledger.outcomes
            if approved_here and wait.status is WaitStatus.DELIVERED:
                commands.append(self._approval(wait))
        await self._send(commands)

    def _approval(self, wait: Wait) -> tuple[TaskOperation, str]:
        """Wait ids are the run's own, across attempts: the key needs no attempt."""
        decided = "approved" if wait.decision is Decision.APPROVE else "rejected"
        comment = f": {wait.comment_excerpt()}" if wait.comment else ""
        evidence = RecordEvidence(
            kind=EvidenceKind.EXTERNAL,
            summary=f"approval {wait.id}: {decided} by {wait.delivered_by}{comment}"[:500],
            location=f"run:{self._run_id}/wait:{wait.id}",
            run_id=self._run_id,
            node_id=wait.node_id,
        )
        return evidence, f"harness:{self._run_id}:wait:{wait.id}"

    async def ended(
        self,
        status: str,
        report: str | None,
        ledger: NodeLedger | None,
        carried: list[str] | None = None,
    ) -> None:
        """How the run ended; a run that SUCCEEDED submits its report and the evidence it
        rests on (its finished nodes, and for a repair run the evidence `carried` forward
        from the submission sent back) for review, instead of declaring the task done."""
        operations: list[tuple[TaskOperation, str]] = []
        if status == "SUCCEEDED" and report and ledger is not None:
            done = [  # the nodes whose evidence this run records (finished_nodes)
                n
                for n, o in ledger.outcomes.items()
                if o.status is NodeStatus.DONE and not o.reused
            ]
            own = [f"run:{self._run_id}/node:{node_id}" for node_id in done]
            submission = Submit(
                summary=report.strip()[:SUBMISSION_SUMMARY_CHARS] or "(empty report)",
                evidence_ids=list(dict.fromkeys([*(carried or [])[:100], *own]))[:200],
                run_id=self._run_id,
            )
            operations.append((submission, f"harness:{self._run_id}:submit"))
        operations.append(
            (RunEnded(run_id=self._run_id, status=status), f"harness:{self._run_id}:end")
        )
        await self._send(operations)

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
                fence=binding.fence,  # a superseded writer's reports are refused
            )
            for operation, key in operations
        ]
        try:
            result: TaskCommandsResult = await workflow.execute_activity(
                TASK_COMMANDS_ACTIVITY,
                TaskCommandsRequest(scope=binding.scope, commands=commands),
                result_type=TaskCommandsResult,
                start_to_close_timeout=TASK_COMMANDS_TIMEOUT,
                retry_policy=TASK_COMMANDS_RETRY,
                summary=f"task {binding.task_id}: {operations[0][0].op} x{len(operations)}",
            )
        except ActivityError as error:
            raise_if_cancelled(error)  # the run was cancelled meanwhile: it ends CANCELLED
            # the task's ledger is not the run's outcome: the run goes on, and says so
            workflow.logger.warning("task.unreachable", extra={"error": str(error.cause)})
            return
        refused = [r.reason for r in result.receipts if not r.accepted]
        if refused:
            workflow.logger.warning("task.commands_refused", extra={"reasons": refused})
