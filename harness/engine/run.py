"""Run I/O: what a caller asks for, what the run reports back, and its live status."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import AliasChoices, BaseModel, Field, JsonValue

from harness.core.errors import FailureContext
from harness.core.plan import Plan
from harness.core.usage import TokenUsage
from harness.engine.budget import BudgetLimits, BudgetSnapshot
from harness.engine.compact import unless_false, unless_none
from harness.engine.dag import NodeStatus
from harness.engine.faults import FaultSpec
from harness.engine.run_models import RunModels
from harness.engine.trace import TraceEvent
from harness.engine.validation import DEFAULT_MAX_NODES, ValidationIssue
from harness.governance.work import TaskBinding
from harness.recall.memory_context import DEFAULT_BUDGET_CHARS
from harness.waits.wait_book import Wait

DEFAULT_SCENARIO = "cities"
DEFAULT_MAX_REPLANS = 2
DEFAULT_MAX_CONCURRENCY = 16


class RunPhase(StrEnum):
    CREATED = "CREATED"
    PLANNING = "PLANNING"
    VALIDATING = "VALIDATING"
    EXECUTING = "EXECUTING"
    VERIFYING = "VERIFYING"
    REPLANNING = "REPLANNING"
    WAITING = "WAITING"
    SUCCEEDED = "SUCCEEDED"
    FAILED_VALIDATION = "FAILED_VALIDATION"
    FAILED_EXECUTION = "FAILED_EXECUTION"
    FAILED_VERIFICATION = "FAILED_VERIFICATION"
    FAILED_PROVIDER = "FAILED_PROVIDER"
    """A model call of the run (the planner's, an agent turn's, a writing tool's, the judge's)
    failed for good: the provider refused the request or the key, or kept failing after every
    retry. Nothing another plan could mend."""
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
    CANCELLED = "CANCELLED"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL_PHASES


TERMINAL_PHASES = frozenset(
    {
        RunPhase.SUCCEEDED,
        RunPhase.FAILED_VALIDATION,
        RunPhase.FAILED_EXECUTION,
        RunPhase.FAILED_VERIFICATION,
        RunPhase.FAILED_PROVIDER,
        RunPhase.BUDGET_EXHAUSTED,
        RunPhase.CANCELLED,
    }
)


class UnreadableRunRequestError(ValueError):
    """A workflow input that does not decode as a RunRequest: the run fails (not its task)."""


class RunRequest(BaseModel):
    """The workflow's input. Keep its validation as it is: RunRequest is decoded again on every
    replay, so a rule added here would strand the runs it refuses. New limits go in
    `harness.engine.bounds`."""

    goal: str = Field(min_length=1)
    scenario: str = DEFAULT_SCENARIO
    session_id: str | None = None
    limits: BudgetLimits = Field(default_factory=BudgetLimits)
    max_replans: int = Field(default=DEFAULT_MAX_REPLANS, ge=0)
    max_concurrency: int = Field(default=DEFAULT_MAX_CONCURRENCY, ge=1)
    max_nodes: int = Field(default=DEFAULT_MAX_NODES, ge=1)
    plan: Plan | None = Field(default=None, description="A fixed plan: skips the planner.")
    provider: str | None = Field(
        default=None, description="LLM provider for this run; the worker's default when unset."
    )
    models: RunModels = Field(
        default_factory=lambda: RunModels(),
        description="Models per role for this run; the worker's for each role left unset.",
    )
    faults: list[FaultSpec] = Field(
        default_factory=list, description="Injected failures, for tests and demos."
    )
    approve_side_effects: bool = Field(
        default=True, description="Tools with side effects wait for approval before they run."
    )
    ask_user: bool = Field(
        default=True, description="Ask the user when the goal lacks information the plan needs."
    )
    wait_timeouts: WaitTimeouts = Field(default_factory=lambda: WaitTimeouts())
    actor_keys: dict[str, str] = Field(
        default_factory=dict,
        description="Signed actors: actor -> Ed25519 public key (base64). When set, approvals, "
        "reconciles, async results and answers must be signed by one of them "
        "(harness.waits.signatures).",
    )
    scale: ScaleOptions = Field(default_factory=lambda: ScaleOptions())
    memory: MemoryOptions = Field(default_factory=lambda: MemoryOptions())
    task: TaskBinding | None = Field(
        default=None,
        description="The task the run works on: it binds itself to it, records each DONE "
        "node as TOOL evidence there, and says how it ended.",
    )
    scope: str | None = Field(
        default=None,
        description="A run that works on no task: the scope whose contract it is held to "
        "(none: the scope `default`).",
    )
    agent_runtime: str | None = unless_none(
        description="The agent runtime its agent nodes run on (`pydantic-ai`); none: the "
        "built-in loop."
    )


MIN_MEMORY_CHARS = 200
MAX_MEMORY_CHARS = 200_000


class MemoryOptions(BaseModel):
    """What the run remembers: memories in the planner's context, and its own episode at the end."""

    enabled: bool = Field(
        default=True, description="False (--no-memory): the run neither reads nor writes memory."
    )
    budget_chars: int = Field(
        default=DEFAULT_BUDGET_CHARS,
        ge=MIN_MEMORY_CHARS,
        le=MAX_MEMORY_CHARS,
        description="The most characters of the planner's memory context (--memory-budget).",
    )


class WaitTimeouts(BaseModel):
    """How long each kind of wait may stay pending before it expires (seconds)."""

    approval: float = Field(default=24 * 3600, gt=0)
    user_input: float = Field(default=24 * 3600, gt=0)
    async_operation: float = Field(default=3600, gt=0)
    external_event: float = Field(default=24 * 3600, gt=0)
    reconcile: float = Field(default=7 * 24 * 3600, gt=0)


class ScaleOptions(BaseModel):
    """When a plan is wider than one run's history should hold, ready nodes run in batches of
    child workflows (about three history events per node land in the child, not the parent)."""

    batch_plan_nodes: int = Field(
        default=1000,
        ge=1,
        description="Batch plans larger than this, and validate them in a local activity.",
    )
    batch_min_ready: int = Field(default=100, ge=1, description="Batch when this many are ready.")
    batch_size: int = Field(default=1500, ge=1, le=3000, description="Nodes per child workflow.")
    cheap_group_size: int = Field(
        default=100,
        ge=1,
        le=500,
        description="Ready calls of cheap, in-memory tools made together in one local activity, "
        "up to this many (1: each in its own).",
    )
    agent_turns_per_run: int | None = unless_none(
        ge=1,
        le=50,
        description="Turns an agent node's child workflow takes before it continues as new "
        "(none: harness.engine.agent_loop.TURNS_PER_RUN).",
    )


class ExecutionOptions(BaseModel):
    """How one attempt's plan is executed: everything the scheduler and its helpers need from
    the request, travelling as one model."""

    run_id: str
    scenario: str
    attempt: int = Field(ge=1)
    max_concurrency: int = Field(ge=1)
    provider: str | None = None
    worker_model: str | None = None
    cost_limited: bool = unless_false(
        description="The run has a cost limit: its model calls refuse a model no price table lists."
    )
    agent_model: str | None = Field(
        default=None, description="The model of the run's agent nodes; none: the worker's."
    )
    agent_runtime: str | None = unless_none(
        description="The agent runtime of the run's agent nodes; none: the built-in loop."
    )
    faults: list[FaultSpec] = Field(default_factory=list)
    approve_side_effects: bool = True
    wait_timeouts: WaitTimeouts = Field(default_factory=WaitTimeouts)
    scale: ScaleOptions = Field(default_factory=ScaleOptions)
    task: TaskBinding | None = None
    economy_under_pressure: bool = Field(
        default=False,
        description="Tools that write switch to the fallback model from a pressure of 0.7.",
    )
    group_cheap_calls: bool = Field(
        default=False,
        description="Ready cheap calls share one local activity (runs before 0.9 made one each).",
    )
    parallel_batches: bool = Field(
        default=False,
        description="A wide plan's child batches run at once, sharing the concurrency cap "
        "(runs before 0.9 ran them one after another).",
    )
    reserve_attempts: bool = Field(
        default=False,
        description="Each tool call reserves its attempts from the tool-call budget when it is "
        "admitted and makes no more (runs before 0.10 charged retries after they ran).",
    )
    approval_covers: bool = Field(
        default=False,
        description="An action approved or rejected in an earlier attempt is not asked again, "
        "decided when the run starts (runs before asked it where a cover was found).",
    )
    known_outcomes: bool = Field(
        default=False,
        description="An operation whose outcome an earlier attempt was delivered, started "
        "again by a replan's node (the same payment, by its idempotency key), is settled from "
        "that outcome (runs before 0.10 waited for the system to report it again, a report "
        "that can come before the new wait opens and is then taken as a duplicate).",
    )
    batches_start_in_turn: bool = Field(
        default=False,
        description="A wide plan's child batches are prepared and started one per workflow "
        "task, each once the one before has started, so no task holds the work of a whole "
        "20,000-node plan (runs before 0.10 prepared them all in one task).",
    )

    @classmethod
    def of(
        cls, run_id: str, request: RunRequest, attempt: int, task: TaskBinding | None
    ) -> ExecutionOptions:
        """`task` is the one the run works on now: its request's, or one it created."""
        return cls(
            run_id=run_id,
            scenario=request.scenario,
            attempt=attempt,
            max_concurrency=request.max_concurrency,
            provider=request.provider,
            worker_model=request.models.worker,
            cost_limited=request.limits.max_cost_usd is not None,
            agent_model=request.models.agent,
            agent_runtime=request.agent_runtime,
            faults=request.faults,
            approve_side_effects=request.approve_side_effects,
            wait_timeouts=request.wait_timeouts,
            scale=request.scale,
            task=task,
        )


class NodeOutcome(BaseModel):
    id: str
    tool: str
    tool_role: str = Field(
        validation_alias=AliasChoices("tool_role", "role"),
        description="The tool's role: DATA or FINAL_SYNTHESIS (results before 0.2 call it role).",
    )
    status: NodeStatus = NodeStatus.PENDING
    result: JsonValue = None
    error_code: str | None = None
    error_message: str | None = None
    attempts: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None
    latency_ms: float | None = Field(
        default=None, description="Scheduled to finished, as the workflow saw it."
    )
    tool_latency_ms: float | None = Field(
        default=None,
        description="The last attempt's own time, by the activity's clock (the trace's latency).",
    )
    usage: TokenUsage | None = None
    reused: bool = Field(
        default=False, description="Took the result of an identical node from an earlier attempt."
    )


class Verdict(BaseModel):
    passed: bool
    reasons: list[str] = Field(default_factory=list)
    checked_by: list[str] = Field(default_factory=list)
    score: float | None = Field(default=None, description="The judge's score, when it ran.")
    judge_skipped_reason: str | None = None


class AttemptRecord(BaseModel):
    """One pass through plan -> validate -> execute -> verify."""

    attempt: int
    plan: Plan | None = None
    planned_by: str | None = None
    validation_issues: list[ValidationIssue] = Field(default_factory=list)
    outcome: RunPhase | None = None
    failure: list[FailureContext] = Field(default_factory=list)


class RunCounts(BaseModel):
    nodes: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0
    tool_calls: int = 0
    replans: int = 0


class RunStatus(BaseModel):
    """A running run as it stands: its phase, plan, each node's outcome, counts, budget and
    waits (the `status` query)."""

    run_id: str
    phase: RunPhase
    attempt: int
    plan: Plan | None
    nodes: list[NodeOutcome]
    counts: RunCounts
    budget: BudgetSnapshot
    waits: list[Wait] = Field(default_factory=list)


class RunResult(BaseModel):
    """How a run ended, whatever the ending: its final status, report, plan, each node's
    outcome, the judge's verdict, trace, budget and usage, and the error that ended it, if any."""

    run_id: str
    status: RunPhase
    goal: str
    scenario: str
    session_id: str | None = None
    report: str | None = None
    plan: Plan | None = None
    attempts: int
    attempt_history: list[AttemptRecord]
    nodes: list[NodeOutcome]
    verdict: Verdict | None = None
    trace: list[TraceEvent]
    counts: RunCounts
    budget: BudgetSnapshot
    usage: TokenUsage
    usage_by_role: dict[str, TokenUsage] = Field(default_factory=dict)
    waits: list[Wait] = Field(default_factory=list)
    report_partial: bool = False
    started_at: datetime
    finished_at: datetime
    wall_seconds: float
    error: str | None = None
