"""Recovery policy, the whole rule in one table: what a run does after a phase fails.

From the failure's class, the phase that failed, the replans used and allowed, the budget's
degradation level, whether the user may still be asked and what caused the failure (a model
call the provider failed, a model's `cannot_plan`), `decide` returns the action, the phase the
run enters next and the reason. The workflow only records the decision and follows it.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel

from harness.core.errors import ErrorClass, ErrorCode
from harness.engine.budget import Degradation
from harness.engine.run import RunPhase


class RecoveryAction(StrEnum):
    REPLAN = "REPLAN"
    ASK_USER = "ASK_USER"
    HALT = "HALT"


class FailedPhase(StrEnum):
    """Where the failure happened; each ends the run in its own terminal phase when it halts."""

    PLANNING = "PLANNING"
    VALIDATING = "VALIDATING"
    EXECUTING = "EXECUTING"
    VERIFYING = "VERIFYING"

    @property
    def terminal(self) -> RunPhase:
        return _TERMINAL_OF[self]


_TERMINAL_OF = {
    FailedPhase.PLANNING: RunPhase.FAILED_VALIDATION,
    FailedPhase.VALIDATING: RunPhase.FAILED_VALIDATION,
    FailedPhase.EXECUTING: RunPhase.FAILED_EXECUTION,
    FailedPhase.VERIFYING: RunPhase.FAILED_VERIFICATION,
}


PROVIDER_FAILURE_CODES = frozenset(
    {
        ErrorCode.REQUEST_REJECTED,
        ErrorCode.AUTH_FAILED,
        ErrorCode.CONFIG_INVALID,
        ErrorCode.RATE_LIMITED,
        ErrorCode.TIMEOUT,
        ErrorCode.PROVIDER_UNAVAILABLE,
    }
)
"""The codes of a model call that the provider refused (the request, the key, the model) or
kept failing after every retry: a run that halts on one ends FAILED_PROVIDER."""


def is_provider_failure(code: str) -> bool:
    """A model call's failure code that ends a halting run FAILED_PROVIDER."""
    return code in PROVIDER_FAILURE_CODES


class FailureCause(BaseModel):
    """What caused a failure, beyond its class."""

    provider_failed: bool = False
    """A model call failed for good (PROVIDER_FAILURE_CODES): a halt ends FAILED_PROVIDER."""
    model_refusals: int = 0
    """How many plan attempts of the run the model answered `cannot_plan`, this one included
    (0: the failure is none)."""


class RecoveryInput(BaseModel):
    error_class: ErrorClass
    failed: FailedPhase
    replans_used: int
    max_replans: int
    degradation: Degradation
    may_ask_user: bool = False
    provider_failed: bool = False
    model_refusals: int = 0


class RecoveryDecision(BaseModel):
    error_class: ErrorClass
    action: RecoveryAction
    next_phase: RunPhase
    reason: str


RETRIES_EXHAUSTED = "retries exhausted under Temporal's retry policy"
FATAL_HALTS = "a FATAL failure is not fixed by another plan"
NEEDS_INFORMATION = "the planner needs information the goal does not give"
MODEL_CANNOT_PLAN = "the model cannot plan: plan once more, told its reason"
NO_REPLAN_UNDER_PRESSURE = "budget pressure is at CONSERVE or above: no replan for a failed verdict"
BUDGET_EXHAUSTED = "the budget does not allow another plan"


def decide(facts: RecoveryInput) -> RecoveryDecision:
    """TRANSIENT failures were already retried by Temporal, so they halt like FATAL ones; a
    halt on a model call the provider failed ends FAILED_PROVIDER. The model's first
    `cannot_plan` of a run replans (while replans and budget allow); after that, and whenever
    the planner misses information, the user is asked while questions are left, else the run
    halts. VALIDATION and MISSING_INFO replan while replans and budget allow, except that a
    failed verdict is not replanned once the budget is under pressure."""
    action, reason = _action(facts)
    if action is RecoveryAction.REPLAN:
        next_phase = RunPhase.REPLANNING
    elif action is RecoveryAction.ASK_USER:
        next_phase = RunPhase.WAITING
    elif facts.degradation is Degradation.EXHAUSTED:
        next_phase = RunPhase.BUDGET_EXHAUSTED
    elif facts.provider_failed:
        next_phase = RunPhase.FAILED_PROVIDER
    else:
        next_phase = facts.failed.terminal
    return RecoveryDecision(
        error_class=facts.error_class, action=action, next_phase=next_phase, reason=reason
    )


def _action(facts: RecoveryInput) -> tuple[RecoveryAction, str]:
    if facts.error_class is ErrorClass.TRANSIENT:
        return RecoveryAction.HALT, RETRIES_EXHAUSTED
    if facts.error_class is ErrorClass.FATAL:
        return RecoveryAction.HALT, FATAL_HALTS
    if facts.error_class is ErrorClass.MISSING_INFO and facts.failed is FailedPhase.PLANNING:
        if facts.model_refusals == 1 and _may_replan(facts):
            return RecoveryAction.REPLAN, MODEL_CANNOT_PLAN
        if facts.may_ask_user:
            return RecoveryAction.ASK_USER, "ask the user for what the goal does not give"
        return RecoveryAction.HALT, NEEDS_INFORMATION
    if facts.replans_used >= facts.max_replans:
        return (
            RecoveryAction.HALT,
            f"no replans left ({facts.replans_used} of {facts.max_replans} used)",
        )
    if facts.degradation is Degradation.EXHAUSTED:
        return RecoveryAction.HALT, BUDGET_EXHAUSTED
    if facts.failed is FailedPhase.VERIFYING and facts.degradation is not Degradation.FULL:
        return RecoveryAction.HALT, NO_REPLAN_UNDER_PRESSURE
    return RecoveryAction.REPLAN, f"replan {facts.replans_used + 1} of {facts.max_replans}"


def _may_replan(facts: RecoveryInput) -> bool:
    return facts.replans_used < facts.max_replans and facts.degradation is not Degradation.EXHAUSTED
