"""Completion gates: what must hold of a task's latest submission before the task is DONE.

The built-in gates check the reference chain (an approved review exists; the submission rests on
evidence that is recorded in this task's ledger), never the truth of an artefact. Acceptance
checks registered in code (a scenario's, e.g. the refunds' `payment-verified`) may look further,
from an activity; an acceptance check nobody registered fails closed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, Field

from harness.governance.host_contract import (
    APPROVED_REVIEW_GATE,
    EVIDENCE_GATE,
    PRESET_GATE,
    ContractInForce,
)
from harness.governance.work import Evidence, GateResult, Submission, SubmissionStatus, TaskRecord

Verdict = Callable[[str, bool, str], GateResult]


class GateInput(BaseModel):
    """What a completion is judged on: the task, its latest submission, and the evidence records
    the submission references (`unknown`: the references this ledger has no record of)."""

    task: TaskRecord
    submission: Submission | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    unknown: list[str] = Field(default_factory=list)

    def results_of(self, tool: str) -> list[Evidence]:
        """The evidence of `tool`'s results that a check may trust: recorded by a system (the
        harness; only a system may say which tool a result came from) for a run bound to this
        task."""
        bound = {run.run_id for run in self.task.runs}
        return [
            e
            for e in self.evidence
            if e.tool == tool and e.recorded_by.startswith("system:") and e.run_id in bound
        ]


def built_in_gates(contract: ContractInForce, given: GateInput, now: datetime) -> list[GateResult]:
    """The gates the contract turns on, in order: a preset the contract does not know (fail
    closed), an approved review, the completion evidence."""
    results: list[GateResult] = []
    submission = given.submission
    sub_id = submission.id if submission else None

    def verdict(gate: str, passed: bool, reason: str) -> GateResult:
        return GateResult(
            gate=gate, passed=passed, reason=reason, submission_id=sub_id, checked_at=now
        )

    if contract.preset_problem:
        results.append(verdict(PRESET_GATE, False, contract.preset_problem))
    if contract.requires_approved_review:
        if submission is None:
            results.append(verdict(APPROVED_REVIEW_GATE, False, "there is no submission"))
        elif submission.status is SubmissionStatus.APPROVED:
            results.append(verdict(APPROVED_REVIEW_GATE, True, "an approved review exists"))
        else:
            reason = f"submission '{submission.id}' is {submission.status.value}, not APPROVED"
            results.append(verdict(APPROVED_REVIEW_GATE, False, reason))
    if contract.requires_completion_evidence:
        results.append(_evidence_gate(given, verdict))
    return results


def _evidence_gate(given: GateInput, verdict: Verdict) -> GateResult:
    submission = given.submission
    if submission is None:
        return verdict(EVIDENCE_GATE, False, "there is no submission")
    if not submission.evidence_ids:
        return verdict(EVIDENCE_GATE, False, "the submission references no evidence")
    if given.unknown:
        reason = f"no evidence {', '.join(given.unknown)} in this task's ledger"
        return verdict(EVIDENCE_GATE, False, reason)
    count = len(submission.evidence_ids)
    return verdict(EVIDENCE_GATE, True, f"{count} evidence record(s), all in this task")


def unregistered(check: str, submission: Submission | None, now: datetime) -> GateResult:
    return GateResult(
        gate=check,
        passed=False,
        reason=f"no acceptance check '{check}' is registered on this worker: it fails closed",
        submission_id=submission.id if submission else None,
        checked_at=now,
    )
