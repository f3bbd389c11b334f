"""Recovery policy: from a failure's class, the budget and the replans left, what to do next."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel

from harness.errors import ErrorClass


class RecoveryAction(StrEnum):
    RETRY = "RETRY"
    REPLAN = "REPLAN"
    HALT = "HALT"


class RecoveryDecision(BaseModel):
    error_class: ErrorClass
    action: RecoveryAction
    reason: str


_ACTION_OF = {
    ErrorClass.TRANSIENT: RecoveryAction.RETRY,
    ErrorClass.VALIDATION: RecoveryAction.REPLAN,
    ErrorClass.MISSING_INFO: RecoveryAction.REPLAN,
    ErrorClass.FATAL: RecoveryAction.HALT,
}


def decide(
    error_class: ErrorClass, *, replans_used: int, max_replans: int, budget_allows: bool
) -> RecoveryDecision:
    """TRANSIENT retries (inside Temporal's retry policy), VALIDATION and MISSING_INFO replan
    while replans and budget allow, FATAL halts."""
    action = _ACTION_OF[error_class]
    if action is not RecoveryAction.REPLAN:
        return RecoveryDecision(error_class=error_class, action=action, reason=error_class.value)
    if replans_used >= max_replans:
        reason = f"no replans left ({replans_used} of {max_replans} used)"
        return RecoveryDecision(error_class=error_class, action=RecoveryAction.HALT, reason=reason)
    if not budget_allows:
        reason = "the budget does not allow another plan"
        return RecoveryDecision(error_class=error_class, action=RecoveryAction.HALT, reason=reason)
    reason = f"replan {replans_used + 1} of {max_replans}"
    return RecoveryDecision(error_class=error_class, action=RecoveryAction.REPLAN, reason=reason)
