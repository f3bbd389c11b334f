"""Tasks, contracts and lessons from Python: the calls the `harness task|fact|evidence|decision|
submit|review|context|contract|lesson` commands make, and the commands they send.

    harness = await Harness.connect()
    receipt = await harness.tasks.scope_command(
        GraphCommand(scope="shop", actor="human:ops", operation=CreateTask(title="Refund A-1"))
    )
    await harness.tasks.task_command(
        "shop", TaskCommand(task_id=receipt.id, actor="human:ops", operation=Complete())
    )

A command is one operation by one actor: a `TaskCommand` changes one task (`Complete`,
`Submit`, `ReviewSubmission`, `RecordFact`, ...), a `GraphCommand` a scope's task graph
(`CreateTask`, `AddDependency`), a `RulesCommand` its contract and lessons (`SetContract`,
`ProposeLesson`, `ResolveLesson`, `PromoteLesson`, `RevokeRule`, `SetKeys`). The gateway
answers with a `LedgerReceipt`, or refuses: `durable_harness.TaskRefused` with its one-line
reason (the CLI's line, exit 2), and nothing changed. A task or scope the server does not know
is `durable_harness.NotFound`. `sign_command` signs a command as its actor (docs/security.md).

The models are the domain's own (`harness.governance`), re-exported here so that this module,
not the internal layout, is what an application imports. Importing it does not load the
Temporal SDK; calling `Tasks` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from durable_harness._client.signed_actors import sign_command
from harness.governance.host_contract import Contract, ContractInForce, RuleKind
from harness.governance.scope_rules import (
    PromoteLesson,
    ProposeLesson,
    ResolveLesson,
    RevokeRule,
    RulesCommand,
    ScopeRulesState,
    SetContract,
    SetKeys,
)
from harness.governance.task_commands import (
    Complete,
    InvalidateFact,
    LedgerReceipt,
    ProposeDecision,
    RecordEvidence,
    RecordFact,
    ResolveDecision,
    ReviewSubmission,
    SetStatus,
    Submit,
    TaskCommand,
)
from harness.governance.task_graph import AddDependency, CreateTask, GraphCommand, TaskGraphState
from harness.governance.task_ledger import TaskContext, TaskLedgerState
from harness.governance.work import EvidenceKind, TaskStatus

if TYPE_CHECKING:
    from temporalio.client import Client

__all__ = [
    "AddDependency",
    "Complete",
    "Contract",
    "ContractInForce",
    "CreateTask",
    "EvidenceKind",
    "GraphCommand",
    "InvalidateFact",
    "LedgerReceipt",
    "PromoteLesson",
    "ProposeDecision",
    "ProposeLesson",
    "RecordEvidence",
    "RecordFact",
    "ResolveDecision",
    "ResolveLesson",
    "ReviewSubmission",
    "RevokeRule",
    "RuleKind",
    "RulesCommand",
    "ScopeRulesState",
    "SetContract",
    "SetKeys",
    "SetStatus",
    "Submit",
    "TaskCommand",
    "TaskContext",
    "TaskGraphState",
    "TaskLedgerState",
    "TaskStatus",
    "Tasks",
    "sign_command",
]


@dataclass(frozen=True)
class Tasks:
    """Tasks, contracts and lessons on one Temporal server: `Harness.tasks`. Writes are updates
    the gateway validates (TaskRefused when it says no, nothing changed); reads are queries."""

    client: Client = field(repr=False)
    task_queue: str

    async def task_command(self, scope: str, command: TaskCommand) -> LedgerReceipt:
        """Change one task of `scope`: complete, submit, review, record a fact or evidence..."""
        from durable_harness._client import tasks

        return await tasks.task_command(self.client, scope, command)

    async def scope_command(self, command: GraphCommand) -> LedgerReceipt:
        """Create a task or add a dependency; the scope's graph starts the first time."""
        from durable_harness._client import tasks

        return await tasks.scope_command(self.client, self.task_queue, command)

    async def rules_command(self, command: RulesCommand) -> LedgerReceipt:
        """Set the scope's contract or keys, or propose, resolve or promote a lesson, or revoke
        a rule."""
        from durable_harness._client import tasks

        return await tasks.rules_command(self.client, self.task_queue, command)

    async def scope_rules(self, scope: str) -> ScopeRulesState:
        """The scope's contract, lessons and rules; a scope nobody used has the defaults."""
        from durable_harness._client import tasks

        return await tasks.scope_rules(self.client, scope)

    async def contract_in_force(self, scope: str, preset: str | None = None) -> ContractInForce:
        """What a task of `preset` is held to: the base contract, the preset, the rules."""
        from durable_harness._client import tasks

        return await tasks.contract_in_force(self.client, scope, preset)

    async def ledger(self, scope: str, task_id: str) -> TaskLedgerState:
        """Everything recorded on the task: its record, facts, evidence, decisions, submissions,
        reviews and gate verdicts."""
        from durable_harness._client import tasks

        return await tasks.ledger(self.client, scope, task_id)

    async def context(self, scope: str, task_id: str, recent: int = 20) -> TaskContext:
        """What a reader of the task needs: the task, the facts believed, open and resolved
        decisions, submissions and reviews, and the `recent` latest evidence."""
        from durable_harness._client import tasks

        return await tasks.context(self.client, scope, task_id, recent)

    async def graph(self, scope: str) -> TaskGraphState:
        """The scope's tasks, their parents and dependencies."""
        from durable_harness._client import tasks

        return await tasks.graph(self.client, scope)

    async def listed(self, scope: str, status: TaskStatus | None = None) -> list[tuple[str, str]]:
        """(task id, status) of the scope's tasks, newest first, through visibility; the server
        needs the tasks' search attributes (`harness server` registers them)."""
        from durable_harness._client import tasks

        await tasks.check_search_attributes(self.client)
        return await tasks.listed(self.client, scope, status)
