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
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

from harness.core.actors import ActorKind, parse_actor
from harness.engine.contracts import (
    TASK_ACCEPTANCE_ACTIVITY,
    TASK_COMMAND_UPDATE,
    TASK_CONTEXT_QUERY,
    TASK_KEYS_SIGNAL,
    TASK_LEDGER_QUERY,
    TASK_SCOPE_KEYS_ACTIVITY,
    TASK_STATUS_QUERY,
    TASK_STATUS_SIGNAL,
    TASK_WORKFLOW,
    scope_workflow_id,
)
from harness.engine.messages import AcceptanceRequest, AcceptanceResult, ScopeKeys, ScopeKeysRequest
from harness.governance.gates import GateInput, built_in_gates
from harness.governance.governance_keys import governance_problem
from harness.governance.host_contract import Act
from harness.governance.task_commands import Complete, LedgerReceipt, ReviewSubmission, TaskCommand
from harness.governance.task_graph import GraphCommand, StatusChanged
from harness.governance.task_ledger import ContextRequest, TaskContext, TaskLedger, TaskLedgerState
from harness.governance.work import GateResult, TaskRecord, TaskStatus
from workflows import search_attributes
from workflows.actor_signatures import verify
from workflows.history_limit import history_full
from workflows.patches import CONTRACT_PATCH, FENCE_PATCH, IDENTITY_PATCH, KEYS_READ_PATCH

HISTORY_EVENTS_BEFORE_NEW_RUN = 5000
"""Well inside Temporal's 50k events and 50 MB, whatever the server suggests earlier."""
FINISHED_GRACE = timedelta(days=1)
"""How long a finished task stays open for its bound runs to report how they ended."""
SYSTEM_ACTOR = "system:harness"
ACCEPTANCE_TIMEOUT = timedelta(seconds=60)
ACCEPTANCE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)


class TaskStart(BaseModel):
    ledger: TaskLedgerState
    actor_keys: dict[str, str] | None = None
    """0.10: the scope's actor keys (harness.governance.governance_keys) when the task was created
    or
    continued as new; None: none."""


@workflow.defn(name=TASK_WORKFLOW)
class TaskWorkflow:
    @workflow.init
    def __init__(self, start: TaskStart) -> None:
        self._ledger = TaskLedger(start.ledger)
        self._actor_keys = dict(start.actor_keys or {})
        self._keys_asked = 0
        self._keys_read = 0

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
            keys = self._actor_keys or None
            workflow.continue_as_new(TaskStart(ledger=self._ledger.state, actor_keys=keys))
        return self._ledger.task

    @workflow.update(
        name=TASK_COMMAND_UPDATE,
        description="Change the task's ledger: a TaskCommand (actor, operation, idempotency "
        "key); refused before anything changes when the gateway says no.",
    )
    async def command(self, command: TaskCommand) -> LedgerReceipt:
        before = self._ledger.task.status
        gates = None
        if self._asks_contract(command) and self._contract_patched():
            gates = await self._judge(command)
        fenced = command.fence is not None and workflow.patched(FENCE_PATCH)
        receipt = self._ledger.apply(
            command, workflow.now(), checked=True, gates=gates, fenced=fenced
        )
        task = self._ledger.task
        if task.status is not before:  # a status, a submission, a review or a completion
            search_attributes.upsert_task_status(task.status.value)
            await self._tell_graph()
        return receipt

    @command.validator
    def _check(self, command: TaskCommand) -> None:
        """The gateway, a stale writer's fence among it: marks are raised only by the handler,
        under FENCE_PATCH, so a task that kept none refuses nothing for its fence."""
        problem = self._ledger.check(command) or self._unsigned(command)
        if problem is not None:
            raise ValueError(problem)

    def _unsigned(self, command: TaskCommand) -> str | None:
        """Where the scope has actor keys, whose command this may be
        (harness.governance.governance_keys).
        A validator only: nothing before 0.10 was refused by it, and a refusal leaves no event."""
        task = self._ledger.task
        return governance_problem(task.scope, task.id, command, self._actor_keys, verify)

    @workflow.signal(
        name=TASK_KEYS_SIGNAL, description="The scope's actor keys changed: read them again."
    )
    async def keys_changed(self) -> None:
        """The news only (anyone may signal): the keys themselves are read from the scope.
        Of reads that overlap, the last one asked wins."""
        if not workflow.patched(KEYS_READ_PATCH):
            return
        self._keys_asked += 1
        asked = self._keys_asked
        scope = self._ledger.task.scope
        try:
            read: ScopeKeys = await workflow.execute_activity(
                TASK_SCOPE_KEYS_ACTIVITY,
                ScopeKeysRequest(scope=scope),
                result_type=ScopeKeys,
                start_to_close_timeout=ACCEPTANCE_TIMEOUT,
                retry_policy=ACCEPTANCE_RETRY,
                summary=f"task {self._ledger.task.id}: the actor keys of {scope}",
            )
        except ActivityError as error:  # the keys held stay in force; said in the log
            workflow.logger.warning("task.keys_unread", extra={"error": str(error)})
            return
        if asked > self._keys_read:
            self._keys_read = asked
            self._actor_keys = dict(read.keys)

    def _contract_patched(self) -> bool:
        """The SDK keeps a patch's first answer for the whole run: a task whose history holds
        a completion from before contracts would answer False forever. Then each later act asks
        a patch of its own, numbered by the ledger, so a live one takes the contract."""
        if workflow.patched(CONTRACT_PATCH):
            return True
        state = self._ledger.state
        return workflow.patched(f"{CONTRACT_PATCH}:{len(state.acceptances)}:{len(state.reviews)}")

    def _asks_contract(self, command: TaskCommand) -> bool:
        """A completion, or a system's approval, not already applied under its key."""
        if self._ledger.seen(command):
            return False
        operation = command.operation
        if isinstance(operation, Complete):
            return True
        approving = isinstance(operation, ReviewSubmission) and operation.approve
        return approving and parse_actor(command.actor)[0] is ActorKind.SYSTEM

    async def _judge(self, command: TaskCommand) -> list[GateResult] | None:
        """The contract in force says whether this actor may do this, and which gates a
        completion must pass; a refusal changes nothing."""
        completing = isinstance(command.operation, Complete)
        act = Act.COMPLETION if completing else Act.APPROVAL
        task = self._ledger.task
        given = self._ledger.gate_input() if completing else None
        try:
            judged: AcceptanceResult = await workflow.execute_activity(
                TASK_ACCEPTANCE_ACTIVITY,
                AcceptanceRequest(scope=task.scope, preset=task.preset, act=act, gate_input=given),
                result_type=AcceptanceResult,
                start_to_close_timeout=ACCEPTANCE_TIMEOUT,
                retry_policy=ACCEPTANCE_RETRY,
                summary=f"task {task.id}: {act.value} under the contract of {task.scope}",
            )
        except ActivityError as error:  # fail closed, and say why
            cause = error.cause.message if isinstance(error.cause, FailureError) else str(error)
            raise ApplicationError(
                f"the contract of scope '{task.scope}' could not be read, so nothing was "
                f"done: {cause}",
                type="ContractUnavailable",
                non_retryable=True,
            ) from error
        if self._ledger.seen(command):  # the same command, applied meanwhile: a duplicate
            return None
        kind, _ = parse_actor(command.actor)
        refusal = judged.contract.refusal(kind, act)
        if refusal is None:  # the ledger may have moved while the contract was read
            refusal = self._recheck(command)
        if refusal is None and given is not None and not _same_judged(self._ledger, given):
            refusal = "the task's submission changed while its gates were checked: ask again"
        if refusal is not None:
            raise ApplicationError(refusal, type="TaskCommandRefused", non_retryable=True)
        if given is None:
            return None
        return built_in_gates(judged.contract, given, workflow.now()) + judged.checks

    def _recheck(self, command: TaskCommand) -> str | None:
        """The gateway's check again, in the handler (which replays): under the 0.10 rules
        where the history says so; the validator, which never replays, always checks them."""
        current = self._ledger.check(command)
        legacy = self._ledger.check(command, legacy=True)
        if current == legacy:
            return current
        state = self._ledger.state
        patch = f"{IDENTITY_PATCH}:{len(state.acceptances)}:{len(state.reviews)}"
        return current if workflow.patched(patch) else legacy

    @workflow.query(name=TASK_CONTEXT_QUERY, description="The task, what is believed and why.")
    def context(self, request: ContextRequest) -> TaskContext:
        return self._ledger.context(request.recent_evidence)

    @workflow.query(name=TASK_STATUS_QUERY, description="The task's status.")
    def status(self) -> TaskStatus:
        return self._ledger.task.status

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
        return history_full(HISTORY_EVENTS_BEFORE_NEW_RUN)


def _same_judged(ledger: TaskLedger, given: GateInput) -> bool:
    """What the gates judged is still what a completion would judge (runs may have come and
    gone meanwhile: they are not judged)."""
    now = ledger.gate_input()
    return (now.submission, now.evidence, now.unknown) == (
        given.submission,
        given.evidence,
        given.unknown,
    )
