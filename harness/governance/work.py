"""Work that outlives a run: tasks, and the ledger of facts, evidence, decisions and relations
that runs, people and systems keep on them.

Plain records; the rules for changing them live in `harness.governance.task_ledger` (one task's
ledger)
and `harness.governance.task_graph` (a scope's tasks and their dependencies).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

SUMMARY_CHARS = 500
"""Bound on every free text of the ledger: records point at artefacts, they do not hold them."""
TEXT = Field(min_length=1, max_length=SUMMARY_CHARS)


class TaskStatus(StrEnum):
    ACTIVE = "ACTIVE"
    BLOCKED = "BLOCKED"
    IN_REVIEW = "IN_REVIEW"
    DONE = "DONE"
    CANCELLED = "CANCELLED"

    @property
    def is_terminal(self) -> bool:
        return self in (TaskStatus.DONE, TaskStatus.CANCELLED)


class EvidenceKind(StrEnum):
    TOOL = "TOOL"
    MODEL = "MODEL"
    TEST = "TEST"
    FILE = "FILE"
    EXTERNAL = "EXTERNAL"


class DecisionStatus(StrEnum):
    PROPOSED = "PROPOSED"
    ACCEPTED = "ACCEPTED"
    REJECTED = "REJECTED"


class EntityKind(StrEnum):
    TASK = "TASK"
    FACT = "FACT"
    DECISION = "DECISION"
    EVIDENCE = "EVIDENCE"
    RUN = "RUN"
    WAIT = "WAIT"


class RelationType(StrEnum):
    PARENT_OF = "PARENT_OF"
    DEPENDS_ON = "DEPENDS_ON"
    SUPPORTS = "SUPPORTS"
    """Evidence backs a fact (or a decision)."""
    DERIVED_FROM = "DERIVED_FROM"


class EntityRef(BaseModel):
    kind: EntityKind
    id: str = Field(min_length=1, max_length=200)

    def label(self) -> str:
        return f"{self.kind.value}:{self.id}"


class Fact(BaseModel):
    """What we currently believe; invalidated with a reason, never deleted."""

    id: str
    statement: str
    source: str
    confidence: float
    run_id: str | None = None
    recorded_by: str
    recorded_at: datetime
    valid: bool = True
    invalidated_by: str | None = None
    invalidated_at: datetime | None = None
    invalidation_reason: str | None = None


class Evidence(BaseModel):
    """Why we believe it: an append-only pointer at an artefact, never invalidated."""

    id: str
    kind: EvidenceKind
    summary: str
    location: str | None = None
    content_ref: str | None = Field(
        default=None, description="Where the artefact is, e.g. run:RUN_ID/node:NODE_ID."
    )
    run_id: str | None = None
    node_id: str | None = None
    tool: str | None = Field(default=None, description="The tool whose result it is.")
    recorded_by: str
    recorded_at: datetime


class Decision(BaseModel):
    id: str
    question: str
    proposal: str
    status: DecisionStatus = DecisionStatus.PROPOSED
    proposed_by: str
    proposed_at: datetime
    resolved_by: str | None = None
    resolved_at: datetime | None = None
    reason: str | None = None

    def resolve(self, accept: bool, actor: str, now: datetime, reason: str) -> None:
        self.status = DecisionStatus.ACCEPTED if accept else DecisionStatus.REJECTED
        self.resolved_by, self.resolved_at, self.reason = actor, now, reason


class Relation(BaseModel):
    id: str
    source: EntityRef
    target: EntityRef
    type: RelationType
    recorded_by: str
    recorded_at: datetime


class SubmissionStatus(StrEnum):
    PENDING = "PENDING"
    APPROVED = "APPROVED"
    CHANGES_REQUESTED = "CHANGES_REQUESTED"
    WITHDRAWN = "WITHDRAWN"
    """The task was taken out of review before anyone reviewed it."""


class Submission(BaseModel):
    """ "The agent says it is done": a result, and the evidence it rests on, for review."""

    id: str
    summary: str
    evidence_ids: list[str] = Field(
        default_factory=list, description="Evidence ids (or run: references not yet recorded)."
    )
    run_id: str | None = None
    status: SubmissionStatus = SubmissionStatus.PENDING
    submitted_by: str
    submitted_at: datetime


class Review(BaseModel):
    id: str
    submission_id: str
    approved: bool
    comment: str | None = None
    reviewed_by: str
    reviewed_at: datetime


class GateResult(BaseModel):
    """One completion gate's verdict on one submission: the acceptance record."""

    gate: str
    passed: bool
    reason: str
    submission_id: str | None = None
    checked_at: datetime | None = None
    completion: int = Field(default=0, description="Which request to complete (1, 2, ...).")


class RunBinding(BaseModel):
    """A run that worked on the task, and how it ended (None while it runs)."""

    run_id: str
    bound_at: datetime
    ended: str | None = None
    repair_of: str | None = Field(
        default=None, description="The run whose submission was sent back: this run repairs it."
    )


FENCE_HOLDER_CHARS = 200
"""Bound on a fence's holder: each task keeps one mark per holder (harness.governance.fencing)."""


class WriterFence(BaseModel):
    """Who writes to a task, as of when: a writer that can be superseded while its work is still
    in flight (a session's slice: its activity may outlive it, on a worker partitioned away or
    in a retry after the session moved on) writes with its holder (what it writes for, e.g.
    `session:s-1`) and its epoch (1, 2, 3, ... one per slice). A task's gateway refuses a write
    whose epoch is older than one its holder has written with since (harness.governance.fencing)."""

    holder: str = Field(min_length=1, max_length=FENCE_HOLDER_CHARS)
    epoch: int = Field(ge=1, le=2**63 - 1)


class TaskBinding(BaseModel):
    """The task a run works on."""

    scope: str
    task_id: str
    fence: WriterFence | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The writer's fence, carried into every write the run makes to the task; "
        "left out of the payload when None, so a binding recorded before dumps the same.",
    )


class ScopeClaim(BaseModel):
    """A run that works on no task names the scope its one task is to be created in."""

    scope: str = Field(min_length=1, max_length=63)


def scope_claim_problem(bound: TaskBinding | None, claimed: str | None, scope: str) -> str | None:
    """Why a run may not create a task in `scope`: an agent writes only in its run's scope.
    A run bound to a task has its task's scope; a run that works on no task claims one scope
    with its first create (which binds it), and every later create must be in that one."""
    home = bound.scope if bound is not None else claimed
    if home is None or home == scope:
        return None
    return (
        f"this run writes in scope '{home}' only: an agent cannot create tasks in scope "
        f"'{scope[:63]}'"
    )


class TaskRecord(BaseModel):
    """A task as its own ledger knows it; its dependencies are its scope graph's."""

    id: str
    scope: str
    title: str
    status: TaskStatus = TaskStatus.ACTIVE
    status_reason: str | None = None
    status_set_by: str | None = Field(
        default=None,
        description="Who set the status last by `set_status` (since 0.10; None before): an "
        "agent may not lift a hold a person or a system put on.",
    )
    parent_id: str | None = None
    preset: str | None = Field(default=None, description="The task type its contract is for.")
    created_by: str
    created_at: datetime
    runs: list[RunBinding] = Field(default_factory=list)
