"""Messages between the workflow and its activities: one pydantic model per message."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field, JsonValue, ValidationError

from harness.catalog.tools import CallPolicy, McpTarget, ToolCatalog
from harness.core.errors import FailureContext
from harness.core.plan import Plan
from harness.core.usage import TokenUsage
from harness.engine.compact import unless_empty, unless_false, unless_none, unless_zero
from harness.engine.faults import FaultSpec
from harness.engine.validation import ValidationIssue
from harness.governance.gates import GateInput
from harness.governance.host_contract import Act, ContractInForce
from harness.governance.task_commands import LedgerReceipt, TaskCommand
from harness.governance.work import Evidence, GateResult, TaskBinding, TaskStatus
from harness.recall.memory_context import MemoryContext


class CatalogRequest(BaseModel):
    scenario: str


class PlanRequest(BaseModel):
    run_id: str
    goal: str
    scenario: str
    attempt: int
    catalog: ToolCatalog
    failures: list[FailureContext] = Field(default_factory=list)
    previous_plan: Plan | None = None
    provider: str | None = None
    task: TaskBinding | None = Field(
        default=None, description="The task the run works on: its plan may use harness_* tools."
    )
    work_notes: list[str] = Field(
        default_factory=list,
        description="What the run is held to: the contract's rules in force and the comments "
        "of the review that sent its task's last submission back.",
    )
    carried_tools: list[str] = Field(
        default_factory=list,
        description="A repair run: tools whose results its task holds from the submission "
        "sent back, carried forward into this run's submission.",
    )
    memory: MemoryContext | None = Field(
        default=None,
        description="Working memory, then what earlier runs and background facts say, under "
        "the run's memory budget; None when the run has no memory.",
    )
    economy: bool = Field(
        default=False,
        description="The budget is under pressure (from 0.7): plan with the fallback model.",
    )
    model: str | None = Field(default=None, description="The run's planner model, if it names one.")
    cost_limited: bool = unless_false(
        description="The run has a cost limit: a model no price table lists is refused."
    )


class PlanResponse(BaseModel):
    plan: Plan
    planned_by: str
    usage: TokenUsage = Field(default_factory=TokenUsage)


class ToolCallRequest(BaseModel):
    run_id: str
    scenario: str
    node_id: str
    tool: str
    arguments: dict[str, JsonValue]
    provider: str | None = unless_none()
    fault: FaultSpec | None = unless_none()
    task: TaskBinding | None = unless_none()
    plan_attempt: int | None = unless_none()
    economy: bool = unless_false(
        description="Under budget pressure: a tool writes with the fallback model."
    )
    worker_model: str | None = unless_none(
        description="The model the run's tools write with, if it names one."
    )
    cost_limited: bool = unless_false(
        description="The run has a cost limit: its model calls refuse a model no price table lists."
    )
    mcp: McpTarget | None = unless_none(
        description="The MCP server and tool that serve this call, if any."
    )
    earlier_attempts: int = unless_zero(
        ge=0,
        description="Attempts the call already had in a group of cheap calls: the activity's "
        "attempts count on from there.",
    )


class AttemptTiming(BaseModel):
    """When a tool call's attempts ran, by the activity's own clock: the last attempt's start
    and end, and the start of every retry that reported it. Results recorded before 0.4 have
    none, and their trace keeps the workflow's times."""

    started_at: datetime
    finished_at: datetime
    retries: dict[int, datetime] = unless_empty(
        default_factory=dict, description="Attempt number (2, 3, ...) to when it started."
    )


class RetryHeartbeat(BaseModel):
    """What a retrying tool call's heartbeats carry, for the attempts after it and for the
    workflow when the call times out: when each retry started, by the activity's clock."""

    retries: dict[int, datetime] = Field(default_factory=dict)

    @classmethod
    def read(cls, details: Sequence[object]) -> dict[int, datetime]:
        """The retry starts in an attempt's heartbeat details; none when there are none or
        they are not this model."""
        if not details:
            return {}
        try:
            return cls.model_validate(details[0]).retries
        except ValidationError:
            return {}


class ToolCallResult(BaseModel):
    result: JsonValue
    attempt: int
    latency_ms: float = Field(description="The last attempt's own time, by the activity's clock.")
    usage: TokenUsage | None = unless_none()
    timing: AttemptTiming | None = unless_none()


class ProbeRequest(BaseModel):
    """Ask the system a side-effecting tool acts on what became of one of its calls."""

    run_id: str
    scenario: str
    node_id: str
    tool: str
    arguments: dict[str, JsonValue]
    operation_id: str | None = Field(
        default=None, description="The operation the call started, when the run knows it."
    )


class ProbeState(StrEnum):
    SETTLED = "SETTLED"
    """The side effect happened and its outcome is known."""
    PENDING = "PENDING"
    """The side effect happened; its outcome is still to come."""
    NOT_FOUND = "NOT_FOUND"
    """The system has no record of the call: nothing was done."""
    UNKNOWN = "UNKNOWN"
    """The system could not tell (or cannot be asked): a person must reconcile."""


class OperationProbe(BaseModel):
    state: ProbeState
    started: JsonValue = Field(
        default=None, description="What the call returned, or would have: its operation id."
    )
    outcome: JsonValue = Field(
        default=None, description="An async operation's outcome, as its callback delivers it."
    )
    detail: str = ""


class PlanCheckRequest(BaseModel):
    """A plan to validate outside the workflow (`harness.engine.validation`, pure): a wide plan's
    validation would take the workflow task past the SDK's deadlock detector."""

    plan: Plan
    catalog: ToolCatalog
    max_nodes: int


class PlanCheckResult(BaseModel):
    issues: list[ValidationIssue] = Field(default_factory=list)


class ReportCheckRequest(BaseModel):
    scenario: str
    goal: str
    report: str
    results: dict[str, JsonValue]


class ReportCheckResult(BaseModel):
    passed: bool
    problems: list[str] = Field(default_factory=list)
    check_name: str


class JudgeCallRequest(BaseModel):
    run_id: str
    scenario: str
    goal: str
    report: str
    results: dict[str, JsonValue]
    provider: str | None = None
    model: str | None = Field(default=None, description="The run's judge model, if it names one.")
    cost_limited: bool = unless_false(
        description="The run has a cost limit: its model calls refuse a model no price table lists."
    )


class JudgeCallResult(BaseModel):
    passed: bool
    score: float
    reasons: list[str]
    model: str
    usage: TokenUsage


class BatchCall(BaseModel):
    node_id: str
    tool: str
    arguments: dict[str, JsonValue]
    summary: str
    fault: FaultSpec | None = unless_none()
    local: bool = unless_false()
    uses_llm: bool = unless_false()
    mcp: McpTarget | None = unless_none()
    policy: CallPolicy | None = unless_none(
        description="The attempts the call reserved from the run's budget, its timeout and "
        "backoff; none: the house's 3 attempts (batches of runs before 0.10)."
    )


class NodeBatchRequest(BaseModel):
    """Independent, already-resolved tool calls that one child workflow runs, so that a very
    wide plan spreads its history over several runs instead of one."""

    run_id: str
    scenario: str
    provider: str | None = unless_none()
    worker_model: str | None = unless_none()
    cost_limited: bool = unless_false(
        description="The run has a cost limit: its model calls refuse a model no price table lists."
    )
    max_concurrency: int
    calls: list[BatchCall]
    task: TaskBinding | None = unless_none()
    plan_attempt: int | None = unless_none()
    cheap_group_size: int = unless_zero(
        ge=0,
        description="Cheap calls made together in one local activity, up to this many; 0: each "
        "in its own (batches of runs before 0.9).",
    )


class BatchCallOutcome(BaseModel):
    node_id: str
    call: ToolCallResult | None = unless_none()
    error_type: str | None = unless_none()
    error_message: str | None = unless_none()
    attempts: int = unless_zero()
    timing: AttemptTiming | None = unless_none()


class NodeBatchResult(BaseModel):
    outcomes: list[BatchCallOutcome]


class ToolCallGroup(BaseModel):
    """Several ready calls of cheap, in-memory tools that one local activity makes at once:
    each call's outcome comes back on its own, and a call that failed is not retried here."""

    calls: list[ToolCallRequest]


class ToolCallGroupResult(BaseModel):
    outcomes: list[BatchCallOutcome] = Field(description="One per call, in the calls' order.")


class TaskCommandsRequest(BaseModel):
    """Commands a run sends to its task's ledger, in order, through the task's gateway."""

    scope: str
    commands: list[TaskCommand]


class TaskCommandsResult(BaseModel):
    receipts: list[LedgerReceipt]


class AcceptanceRequest(BaseModel):
    """A task asks for the contract it is held to before a completion or an approval, and for
    the verdicts of the acceptance checks a completion needs."""

    scope: str
    preset: str | None = None
    act: Act
    gate_input: GateInput | None = Field(
        default=None, description="A completion: the submission and evidence to judge."
    )


class AcceptanceResult(BaseModel):
    contract: ContractInForce
    checks: list[GateResult] = Field(
        default_factory=list,
        description="The required acceptance checks beyond the built-in gates, each judged.",
    )


class ScopeKeysRequest(BaseModel):
    """A task asks its scope's actor keys (harness.governance.governance_keys)."""

    scope: str


class ScopeKeys(BaseModel):
    keys: dict[str, str] = Field(default_factory=dict)


class TaskStatusRequest(BaseModel):
    """A scope asks one of its tasks its status: a `task_status` signal is only the news."""

    scope: str
    task_id: str


class TaskStatusRead(BaseModel):
    status: TaskStatus | None = None
    """None: the task has no workflow (never started, or gone)."""


class WorkContextRequest(BaseModel):
    """A run in a scope, when it starts: the contract it is held to, and what its task (if
    it works on one) asks of it."""

    scope: str
    task_id: str | None = None


class WorkContext(BaseModel):
    contract: ContractInForce
    review_notes: list[str] = Field(
        default_factory=list, description="The comments that sent the last submission back."
    )
    repair_of: str | None = Field(
        default=None, description="The run whose submission was sent back (this run repairs it)."
    )
    carried_evidence: list[Evidence] = Field(
        default_factory=list,
        description="A repair run: the evidence of the submission sent back, which its own "
        "submission rests on too (so a side effect done once is not done again).",
    )

    def carried_tools(self) -> list[str]:
        return sorted({e.tool for e in self.carried_evidence if e.tool})

    def notes(self) -> list[str]:
        """For the planner: the rules it must satisfy, then what the reviewers asked for."""
        comments = [f"review comment: {note}" for note in self.review_notes]
        carried = self.carried_tools()
        done = (
            [
                f"already done on this task, carried forward from the submission sent back: "
                f"{', '.join(carried)}; do not repeat a side effect among them"
            ]
            if carried
            else []
        )
        return [*self.contract.planning_notes(), *comments, *done]
