"""Activities: the contract a task or a run is held to, read from its scope's workflow, and the
acceptance checks a completion needs, judged with the worker's services. Both land in history,
so a contract changed later never changes what a recorded completion or run did."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import structlog
from temporalio import activity

from activities.task_ledger_service import TemporalTaskLedger
from harness.engine.contracts import (
    RUN_WORK_CONTEXT_ACTIVITY,
    SCOPE_TASK_STATUS_ACTIVITY,
    TASK_ACCEPTANCE_ACTIVITY,
    TASK_SCOPE_KEYS_ACTIVITY,
)
from harness.engine.messages import (
    AcceptanceRequest,
    AcceptanceResult,
    ScopeKeys,
    ScopeKeysRequest,
    TaskStatusRead,
    TaskStatusRequest,
    WorkContext,
    WorkContextRequest,
)
from harness.governance.gates import GateInput, unregistered
from harness.governance.host_contract import BUILT_IN_GATES, PRESET_GATE, Act
from harness.governance.task_ledger import TaskLedger
from harness.governance.work import GateResult
from scenarios.base import AcceptanceCheck

log = structlog.get_logger()


class TaskContractActivities:
    def __init__(
        self,
        ledger: TemporalTaskLedger,
        checks: Mapping[str, AcceptanceCheck],
        services: Mapping[str, object],
    ) -> None:
        self._ledger = ledger
        self._checks = checks
        self._services = services

    @activity.defn(name=TASK_ACCEPTANCE_ACTIVITY)
    async def acceptance(self, request: AcceptanceRequest) -> AcceptanceResult:
        contract = await self._ledger.contract_in_force(request.scope, request.preset)
        given = request.gate_input
        if request.act is not Act.COMPLETION or given is None:
            return AcceptanceResult(contract=contract)
        built_in = {*BUILT_IN_GATES, PRESET_GATE}
        checks = [
            await self._judge(c, given) for c in contract.required_checks if c not in built_in
        ]
        return AcceptanceResult(contract=contract, checks=checks)

    @activity.defn(name=TASK_SCOPE_KEYS_ACTIVITY)
    async def scope_keys(self, request: ScopeKeysRequest) -> ScopeKeys:
        """The scope's actor keys, read from its workflow: what its tasks check signatures by."""
        return ScopeKeys(keys=await self._ledger.actor_keys(request.scope))

    @activity.defn(name=SCOPE_TASK_STATUS_ACTIVITY)
    async def task_status(self, request: TaskStatusRequest) -> TaskStatusRead:
        """The status a task's own workflow holds: what its scope's graph takes, whatever a
        `task_status` signal (which anyone may send) says."""
        return TaskStatusRead(status=await self._ledger.status(request.scope, request.task_id))

    async def _judge(self, check_id: str, given: GateInput) -> GateResult:
        now = datetime.now(UTC)
        check = self._checks.get(check_id)
        if check is None:
            return unregistered(check_id, given.submission, now)
        try:
            verdict = await check.judge(given, self._services)
        except Exception as error:  # a check that breaks fails closed, and says why
            log.warning("task.check_failed", check=check_id, error=str(error))
            passed, reason = False, f"the check failed to run: {error}"[:500]
        else:
            passed, reason = verdict.passed, verdict.reason[:500]
        submission = given.submission
        return GateResult(
            gate=check_id,
            passed=passed,
            reason=reason,
            submission_id=submission.id if submission else None,
            checked_at=now,
        )

    @activity.defn(name=RUN_WORK_CONTEXT_ACTIVITY)
    async def work_context(self, request: WorkContextRequest) -> WorkContext:
        """A task that is gone holds the run to its scope's base contract: the tool rules,
        which are the same for every preset."""
        state = None
        if request.task_id is not None:
            state = await self._ledger.ledger_if_any(request.scope, request.task_id)
        if state is None:
            contract = await self._ledger.contract_in_force(request.scope, None)
            return WorkContext(contract=contract)
        ledger = TaskLedger(state)
        contract = await self._ledger.contract_in_force(request.scope, ledger.task.preset)
        run_id = activity.info().workflow_id
        bound = next((run for run in ledger.task.runs if run.run_id == run_id), None)
        return WorkContext(
            contract=contract,
            review_notes=ledger.review_notes(),
            repair_of=bound.repair_of if bound else None,
            carried_evidence=ledger.sent_back_evidence(),
        )
