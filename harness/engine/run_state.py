"""What a run knows, as one serialisable object, and the phases it may move between.

The workflow owns one RunState; phase handlers change it through its methods, and it builds the
`RunStatus` a query returns and the `RunResult` the run ends with. Pure: no Temporal here.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from harness.catalog.tools import ToolCatalog
from harness.core.errors import ErrorClass, ErrorCode, FailureContext
from harness.core.plan import Plan
from harness.core.usage import TokenUsage
from harness.engine.budget import BudgetSnapshot, Degradation
from harness.engine.messages import ToolCallResult, WorkContext
from harness.engine.recovery import FailedPhase, FailureCause, RecoveryInput
from harness.engine.run import (
    TERMINAL_PHASES,
    AttemptRecord,
    NodeOutcome,
    RunCounts,
    RunPhase,
    RunRequest,
    RunResult,
    RunStatus,
    Verdict,
)
from harness.engine.trace import AgentRole, TraceEvent
from harness.waits.wait_book import Wait

MAX_QUESTIONS = 3

_FAILED = (RunPhase.FAILED_VALIDATION, RunPhase.BUDGET_EXHAUSTED, RunPhase.CANCELLED)

TRANSITIONS: dict[RunPhase, tuple[RunPhase, ...]] = {
    RunPhase.CREATED: (RunPhase.PLANNING, RunPhase.FAILED_VALIDATION, RunPhase.CANCELLED),
    RunPhase.PLANNING: (
        RunPhase.VALIDATING,
        RunPhase.WAITING,
        RunPhase.REPLANNING,
        RunPhase.FAILED_VALIDATION,
        RunPhase.FAILED_PROVIDER,
        RunPhase.BUDGET_EXHAUSTED,
        RunPhase.CANCELLED,
    ),
    RunPhase.WAITING: (RunPhase.PLANNING, *_FAILED),
    RunPhase.VALIDATING: (RunPhase.EXECUTING, RunPhase.REPLANNING, *_FAILED),
    RunPhase.EXECUTING: (
        RunPhase.VERIFYING,
        RunPhase.REPLANNING,
        RunPhase.FAILED_EXECUTION,
        RunPhase.FAILED_PROVIDER,
        RunPhase.BUDGET_EXHAUSTED,
        RunPhase.CANCELLED,
    ),
    RunPhase.VERIFYING: (
        RunPhase.SUCCEEDED,
        RunPhase.REPLANNING,
        RunPhase.FAILED_VERIFICATION,
        RunPhase.FAILED_PROVIDER,
        RunPhase.BUDGET_EXHAUSTED,
        RunPhase.CANCELLED,
    ),
    RunPhase.REPLANNING: (RunPhase.PLANNING, RunPhase.CANCELLED),
    **{phase: () for phase in TERMINAL_PHASES},
}
"""Every phase a run may enter from each phase; the terminal phases lead nowhere."""


ANSWER_MARK = "\nAnswer: "
"""What precedes each answer in `RunState.goal()`, the goal that activities are given."""


def split_goal(goal: str) -> tuple[str, list[str]]:
    """`RunState.goal()` taken apart: the goal as asked, and the answers. Everything from the
    first ANSWER_MARK on counts as answers, so no answer's text (whatever lines it holds) is
    ever taken for the goal; a goal that itself holds the mark only loses that tail to the
    answers, which a prompt shows as data."""
    asked, *answers = goal.split(ANSWER_MARK)
    return asked, answers


class IllegalTransitionError(RuntimeError):
    """A handler asked for a move the state machine does not have: a bug, never user input."""


def describe_transitions() -> list[str]:
    """The state machine as the README prints it: one line per non-terminal phase."""
    return [
        f"{phase.value:<11} -> {' | '.join(target.value for target in targets)}"
        for phase, targets in TRANSITIONS.items()
        if targets
    ]


class RunState(BaseModel):
    run_id: str
    request: RunRequest
    started_at: datetime
    phase: RunPhase = RunPhase.CREATED
    catalog: ToolCatalog | None = None
    plan: Plan | None = None
    attempts: list[AttemptRecord] = Field(default_factory=list)
    failures: list[FailureContext] = Field(default_factory=list)
    replans: int = 0
    answers: list[str] = Field(default_factory=list)
    reusable: dict[str, ToolCallResult] = Field(default_factory=dict)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    usage_by_role: dict[str, TokenUsage] = Field(default_factory=dict)
    report: str | None = None
    verdict: Verdict | None = None
    error: str | None = None
    work: WorkContext | None = Field(
        default=None, description="The contract the run is held to, and what its task asks."
    )

    def enter(self, phase: RunPhase) -> bool:
        """Move to `phase` if the state machine allows it; True when the phase changed."""
        if phase is self.phase:
            return False
        if phase not in TRANSITIONS[self.phase]:
            raise IllegalTransitionError(f"{self.phase.value} -> {phase.value} is not a transition")
        self.phase = phase
        return True

    def goal(self) -> str:
        """The goal with the user's answers to the questions asked along the way (one
        ANSWER_MARK each; `split_goal` takes them apart again for a prompt)."""
        return self.request.goal + "".join(f"{ANSWER_MARK}{a}" for a in self.answers)

    def begin_attempt(self) -> AttemptRecord:
        record = AttemptRecord(attempt=len(self.attempts) + 1)
        self.attempts.append(record)
        return record

    @property
    def attempt(self) -> AttemptRecord:
        return self.attempts[-1]

    def planned(self, plan: Plan, planned_by: str) -> None:
        self.attempt.plan, self.attempt.planned_by = plan, planned_by
        self.plan = plan

    def failed(
        self, outcome: RunPhase, error: str, failures: list[FailureContext] | None = None
    ) -> None:
        """The current attempt ended in `outcome`; `failures` tell the next plan what went wrong."""
        self.error = error
        self.attempt.outcome = outcome
        if failures is not None:
            self.failures = failures
            self.attempt.failure = failures

    def may_ask_user(self) -> bool:
        return self.request.ask_user and len(self.answers) < MAX_QUESTIONS

    def answered(self, answer: str) -> None:
        self.answers.append(answer)
        self.failures = []

    def model_refusals(self) -> int:
        """How many of the run's plan attempts the model answered with `cannot_plan`."""
        return sum(
            bool(attempt.failure) and attempt.failure[0].code == ErrorCode.CANNOT_PLAN
            for attempt in self.attempts
        )

    def recovery_input(
        self,
        error_class: ErrorClass,
        failed: FailedPhase,
        level: Degradation,
        cause: FailureCause | None = None,
    ) -> RecoveryInput:
        cause = cause or FailureCause()
        return RecoveryInput(
            error_class=error_class,
            failed=failed,
            replans_used=self.replans,
            max_replans=self.request.max_replans,
            degradation=level,
            may_ask_user=self.may_ask_user(),
            provider_failed=cause.provider_failed,
            model_refusals=cause.model_refusals,
        )

    def charge(self, role: AgentRole, usage: TokenUsage) -> None:
        self.usage = self.usage.plus(usage)
        self.usage_by_role[role] = self.usage_by_role.get(role, TokenUsage()).plus(usage)

    def status(
        self,
        *,
        phase: RunPhase,
        nodes: list[NodeOutcome],
        counts: RunCounts,
        budget: BudgetSnapshot,
        waits: list[Wait],
    ) -> RunStatus:
        return RunStatus(
            run_id=self.run_id,
            phase=phase,
            attempt=len(self.attempts),
            plan=self.plan,
            nodes=nodes,
            counts=counts,
            budget=budget,
            waits=waits,
        )

    def result(
        self,
        *,
        finished_at: datetime,
        nodes: list[NodeOutcome],
        counts: RunCounts,
        budget: BudgetSnapshot,
        waits: list[Wait],
        trace: list[TraceEvent],
    ) -> RunResult:
        return RunResult(
            run_id=self.run_id,
            status=self.phase,
            goal=self.goal(),
            scenario=self.request.scenario,
            session_id=self.request.session_id,
            report=self.report,
            plan=self.plan,
            attempts=len(self.attempts),
            attempt_history=self.attempts,
            nodes=nodes,
            verdict=self.verdict,
            trace=trace,
            counts=counts,
            budget=budget,
            usage=self.usage,
            usage_by_role=self.usage_by_role,
            waits=waits,
            report_partial=self.phase is RunPhase.BUDGET_EXHAUSTED and self.report is not None,
            started_at=self.started_at,
            finished_at=finished_at,
            wall_seconds=(finished_at - self.started_at).total_seconds(),
            error=None if self.phase is RunPhase.SUCCEEDED else self.error,
        )
