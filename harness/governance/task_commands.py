"""The commands that change a task's ledger: one model each, carried in one envelope with the
actor who asks and the idempotency key that makes a retry safe."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from harness.governance.work import (
    TEXT,
    EntityRef,
    EvidenceKind,
    GateResult,
    RelationType,
    TaskStatus,
    WriterFence,
)

ADDED_LATER = frozenset({"tool", "preset"})
"""Optional fields added after keys were first remembered: left out of the fingerprint while
unset, so a command sent again by an older caller still matches its key."""
SIGNATURE_FIELD = "signature"
"""0.10: a command's signature (harness.governance.governance_keys). Who vouches for a command is
not
what it says, so the fingerprint never holds it: the same command sent again, signed or not,
is the same content under its key."""
FENCE_FIELD = "fence"
"""A task command's writer fence (harness.governance.fencing): like the signature, it says who
writes, not what, so the same command sent again by a later epoch is the same content."""


def fingerprint(command: BaseModel) -> str:
    """What a command's idempotency key stands for: everything in it but the key itself (and
    its signature and fence)."""
    exclude = {"idempotency_key", SIGNATURE_FIELD, FENCE_FIELD}
    content = _pruned(command.model_dump(mode="json", exclude=exclude))
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def _pruned(content: Any) -> Any:
    if isinstance(content, dict):
        return {
            key: _pruned(value)
            for key, value in content.items()
            if not (key in ADDED_LATER and value is None)
        }
    return content


class SetStatus(BaseModel):
    op: Literal["set_status"] = "set_status"
    status: TaskStatus
    reason: str | None = Field(default=None, max_length=500)


class RecordFact(BaseModel):
    op: Literal["record_fact"] = "record_fact"
    statement: str = TEXT
    source: str = TEXT
    confidence: float = Field(ge=0.0, le=1.0)
    run_id: str | None = None


class InvalidateFact(BaseModel):
    op: Literal["invalidate_fact"] = "invalidate_fact"
    fact_id: str
    reason: str = TEXT


class RecordEvidence(BaseModel):
    op: Literal["record_evidence"] = "record_evidence"
    kind: EvidenceKind
    summary: str = TEXT
    location: str | None = Field(default=None, max_length=500)
    content_ref: str | None = Field(default=None, max_length=500)
    run_id: str | None = None
    node_id: str | None = None
    tool: str | None = Field(default=None, max_length=200)


class ProposeDecision(BaseModel):
    op: Literal["propose_decision"] = "propose_decision"
    question: str = TEXT
    proposal: str = TEXT


class ResolveDecision(BaseModel):
    op: Literal["resolve_decision"] = "resolve_decision"
    decision_id: str
    accept: bool
    reason: str = TEXT


class AddRelation(BaseModel):
    op: Literal["add_relation"] = "add_relation"
    source: EntityRef
    target: EntityRef
    type: RelationType


class BindRun(BaseModel):
    op: Literal["bind_run"] = "bind_run"
    run_id: str = Field(min_length=1, max_length=200)


class RunEnded(BaseModel):
    op: Literal["run_ended"] = "run_ended"
    run_id: str
    status: str


class Submit(BaseModel):
    """The run (or the agent) says the task is done: the task goes IN_REVIEW."""

    op: Literal["submit"] = "submit"
    summary: str = TEXT
    evidence_ids: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=200
    )
    run_id: str | None = None


class ReviewSubmission(BaseModel):
    op: Literal["review"] = "review"
    submission_id: str
    approve: bool
    comment: str | None = Field(default=None, max_length=2000)


class Complete(BaseModel):
    """Completing evaluates every gate and records each one's verdict; DONE only if all pass."""

    op: Literal["complete"] = "complete"
    reason: str | None = Field(default=None, max_length=500)


TaskOperation = Annotated[
    SetStatus
    | Submit
    | ReviewSubmission
    | Complete
    | RecordFact
    | InvalidateFact
    | RecordEvidence
    | ProposeDecision
    | ResolveDecision
    | AddRelation
    | BindRun
    | RunEnded,
    Field(discriminator="op"),
]


class GovernanceCommand(BaseModel):
    """The envelope every gateway takes (a task's ledger, a scope's graph, its rules): one
    operation, by one actor. The same `idempotency_key` with the same content is applied once
    and then answered "duplicate"; with other content it is refused.

    Each command names what it is for in a small base listed after this one (`ForTask`,
    `ForScope`): pydantic orders fields from the last base to the first, so that name leads
    the JSON as it did before this base existed, and every recorded payload dumps the same."""

    actor: str = Field(
        description="Who asks, as kind:name (human:, agent:, system:); checked by the gateway, "
        "so a bad one is refused with a reason rather than failing to parse."
    )
    operation: BaseModel = Field(
        description="What to change: each command narrows this to its own union of operations."
    )
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description='Makes a retry safe: applied once, then answered "duplicate".',
    )
    signature: str | None = Field(
        default=None,
        max_length=200,
        description="The actor's Ed25519 signature (base64) over harness.governance."
        "governance_keys.governance_message; required where the scope keys the actor.",
    )

    def fingerprint(self) -> str:
        return fingerprint(self)


class ForTask(BaseModel):
    """What a task's command is for: the first field of its JSON."""

    task_id: str


class ForScope(BaseModel):
    """What a scope's command (its graph's, its rules') is for: the first field of its JSON."""

    scope: str


class TaskCommand(GovernanceCommand, ForTask):
    """One change to one task, by one actor."""

    operation: TaskOperation
    fence: WriterFence | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The writer's fence (its holder and epoch), from the run's task binding: "
        "the gateway refuses a write older than one its holder has made since "
        "(harness.governance.fencing). Left out of the payload when None.",
    )


class LedgerReceipt(BaseModel):
    accepted: bool
    duplicate: bool = False
    id: str | None = Field(default=None, description="The record the command created or changed.")
    reason: str
    gates: list[GateResult] = Field(
        default_factory=list, description="complete: each gate's verdict, passed or not."
    )


class IdempotencyKeys:
    """The keys a gateway has applied, with the content each stood for and the record it made
    (the two maps live in the gateway's state, so they travel with it)."""

    def __init__(self, contents: dict[str, str], records: dict[str, str | None]) -> None:
        self._contents = contents
        self._records = records

    def problem(self, key: str | None, content: str) -> str | None:
        if key is not None and self._contents.get(key, content) != content:
            return f"idempotency key '{key}' was already used with other content"
        return None

    def seen(self, key: str | None) -> bool:
        return key is not None and key in self._contents

    def duplicate(self, key: str) -> LedgerReceipt:
        return LedgerReceipt(
            accepted=True, duplicate=True, id=self._records.get(key), reason="duplicate"
        )

    def once(
        self, key: str | None, content: str, change: Callable[[], tuple[str | None, str]]
    ) -> LedgerReceipt:
        """Make the change (checked already) once per key: again, the first answer."""
        if key is not None and self.seen(key):
            return self.duplicate(key)
        record_id, reason = change()
        self.remember(key, content, record_id)
        return LedgerReceipt(accepted=True, id=record_id, reason=reason)

    def remember(self, key: str | None, content: str, record_id: str | None) -> None:
        if key is not None:
            self._contents[key] = content
            self._records[key] = record_id
