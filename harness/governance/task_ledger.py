"""One task's ledger and the gateway every change to it goes through.

`check` says what is wrong with a command, before anything changes: the task it names, the
actor (its form, its length) and what its kind may do, a terminal task, an idempotency key used
with other content, a record that does not exist, a ledger that would pass its size in bytes.
`apply` changes the ledger only for a command `check` passes. In a workflow, `check` is an
update's validator and `apply` its handler, so a refused command leaves no trace in history
and an applied one is journalled there.

A write that carries a writer's fence is refused when its holder has written with a newer epoch
since (harness.governance.fencing); the ledger keeps each holder's highest epoch applied.

Who may do what: an `agent:` actor may record facts, evidence, decisions and relations,
invalidate a fact an agent recorded, and move its task between ACTIVE and BLOCKED, but not lift
a hold a person or a system put on; it may never resolve a decision, complete, cancel or submit
a task. People and systems may do all of it. Actors are compared as one identity however they
are spelt (harness.core.actors.actor_identity): `human:Alice` does not review `human:alice`'s work.

`check(..., legacy=True)` is the gateway of the releases before 0.10 (actors compared by
spelling; an agent could submit, invalidate any fact and lift any hold; no bound on an actor's
length, on names or on bytes, but at most 10,000 records), which a task's workflow keeps for
what its recorded history decided under it: it decides as 0.9's gateway did, whatever the size.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from harness.core.actors import ActorKind, parse_actor, same_actor
from harness.core.limits import MAX_NAME_CHARS
from harness.governance.fencing import mark_written, stale_writer_problem
from harness.governance.gates import GateInput, built_in_gates
from harness.governance.host_contract import ContractInForce
from harness.governance.state_size import (
    Tally,
    actor_kind,
    actor_problem,
    growth_estimate,
    json_bytes,
    names_problem,
)
from harness.governance.task_commands import (
    AddRelation,
    BindRun,
    Complete,
    IdempotencyKeys,
    InvalidateFact,
    LedgerReceipt,
    ProposeDecision,
    RecordEvidence,
    RecordFact,
    ResolveDecision,
    ReviewSubmission,
    RunEnded,
    SetStatus,
    Submit,
    TaskCommand,
    TaskOperation,
)
from harness.governance.work import (
    Decision,
    DecisionStatus,
    EntityKind,
    EntityRef,
    Evidence,
    Fact,
    GateResult,
    Relation,
    RelationType,
    Review,
    RunBinding,
    Submission,
    SubmissionStatus,
    TaskRecord,
    TaskStatus,
    WriterFence,
)

AGENT_STATUSES = frozenset({TaskStatus.ACTIVE, TaskStatus.BLOCKED})
"""The only statuses an agent may set: completing, cancelling and submitting are not its to do."""
GRAPH_RELATIONS = frozenset({RelationType.PARENT_OF, RelationType.DEPENDS_ON})
"""Edges between tasks belong to the scope's task graph (harness.governance.task_graph), not to a
ledger."""
RECENT_EVIDENCE = 20
MAX_LEDGER_BYTES = 1_000_000
"""The most one task's ledger takes as JSON. Its state travels whole through continue-as-new,
one payload that Temporal refuses past 2 MB (and then retries forever): past this bound, a
command that records or changes anything is refused, and the task should be split. About 800
facts with 500-character statements and sources fit (tests/starter/test_task_bounds.py)."""
FINISHING_RESERVE_BYTES = 200_000
"""Above the bound, room for finishing a full task: submitting, reviewing, completing it and
its runs' reports. Cancelling it is never refused for its size (it happens once)."""
RUN_REPORTS = (BindRun, RunEnded)
"""What only the harness (a system) says of a run: that it works on the task, how it ended."""
REF_GROWTH_BYTES = 16
"""A `run:` reference to evidence becomes the evidence's id once recorded, perhaps longer."""
FINISHING = (Submit, ReviewSubmission, Complete, SetStatus, RunEnded)
"""What a full task still takes, within FINISHING_RESERVE_BYTES: what brings it to an end."""
LEGACY_MAX_RECORDS = 10_000
"""Before 0.10, the bound of a ledger was a count of its records, not its bytes: the legacy
gateway keeps it, so a recorded history decides as it did."""
LEGACY_RECORDING = (
    RecordFact,
    RecordEvidence,
    ProposeDecision,
    AddRelation,
    Submit,
    ReviewSubmission,
    Complete,
)
"""What the record count of before 0.10 refused on a ledger at LEGACY_MAX_RECORDS."""


class TaskLedgerState(BaseModel):
    """Everything one task holds: small records that point at artefacts, never the artefacts."""

    task: TaskRecord
    facts: list[Fact] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    submissions: list[Submission] = Field(default_factory=list)
    reviews: list[Review] = Field(default_factory=list)
    acceptances: list[GateResult] = Field(
        default_factory=list, description="Every gate's verdict at every completion asked for."
    )
    keys: dict[str, str] = Field(
        default_factory=dict, description="Idempotency key -> the content it was used with."
    )
    key_ids: dict[str, str | None] = Field(
        default_factory=dict, description="Idempotency key -> the record it created."
    )
    writer_epochs: dict[str, int] = Field(
        default_factory=dict,
        exclude_if=lambda value: not value,
        description="A fenced writer's holder -> the highest epoch it has written with, the "
        "holder that wrote last at the end (harness.governance.fencing). Left out while empty, "
        "so a ledger that never saw a fence is the same payload, and the same size, as before.",
    )


class ContextRequest(BaseModel):
    """The input of a task's context query: how much recent evidence to show."""

    recent_evidence: int = Field(default=RECENT_EVIDENCE, ge=1, le=1000)


class TaskContext(BaseModel):
    """What a reader of a task needs: the task, what is believed and why, what is undecided."""

    task: TaskRecord
    valid_facts: list[Fact]
    invalidated_facts: int
    open_decisions: list[Decision]
    resolved_decisions: list[Decision]
    recent_evidence: list[Evidence]
    evidence_count: int
    relations: list[Relation]
    submissions: list[Submission] = Field(default_factory=list)
    reviews: list[Review] = Field(default_factory=list)
    last_gates: list[GateResult] = Field(
        default_factory=list, description="The gates of the last completion asked for."
    )


class TaskLedger:
    def __init__(self, state: TaskLedgerState) -> None:
        self.state = state
        self._tally = Tally(lambda: json_bytes(self.state))

    @property
    def size(self) -> int:
        """Bytes of the ledger as JSON, as continue-as-new carries it."""
        return self._tally.bytes

    @property
    def task(self) -> TaskRecord:
        return self.state.task

    # -- the gateway ------------------------------------------------------------------------

    def check(self, command: TaskCommand, *, legacy: bool = False) -> str | None:
        """The problem with `command`, or None when it may be applied (or is a duplicate)."""
        if command.task_id != self.task.id:
            return f"the command is for task '{command.task_id[:200]}', not '{self.task.id}'"
        problem = _legacy_actor_problem(command.actor) if legacy else actor_problem(command.actor)
        if problem is not None:
            return problem
        keys = self._keys()
        if keys.seen(command.idempotency_key):
            return keys.problem(command.idempotency_key, command.fingerprint())
        problem = self.stale_writer(command)
        if problem is not None:
            return problem
        if legacy:  # no bound on names or bytes before 0.10: a record cap instead
            return self._rule_problem(command, actor_kind(command.actor), legacy)
        problem = names_problem(_names(command.operation), MAX_NAME_CHARS)
        problem = problem or self._rule_problem(command, actor_kind(command.actor), legacy)
        return problem or self._size_problem(command)

    def _rule_problem(self, command: TaskCommand, kind: ActorKind, legacy: bool) -> str | None:
        operation = command.operation
        problem = None if legacy else self._agent_problem(command, kind)
        if problem is not None:
            return problem
        if self.task.status.is_terminal and not isinstance(operation, RunEnded):
            return f"task '{self.task.id}' is {self.task.status.value}: a finished task is final"
        if isinstance(operation, RUN_REPORTS) and kind is ActorKind.AGENT:
            return "an agent cannot say which runs work on a task or how they ended"
        if (
            legacy
            and isinstance(operation, LEGACY_RECORDING)
            and _records(self.state) >= (LEGACY_MAX_RECORDS)
        ):
            return (
                f"task '{self.task.id}' holds {LEGACY_MAX_RECORDS:,} records, the most a task "
                "may; split it into subtasks"
            )
        if isinstance(operation, SetStatus):
            return self._status_problem(operation, kind)
        if isinstance(operation, Submit):
            return self._submit_problem()
        if isinstance(operation, ReviewSubmission):
            return self._review_problem(operation, kind, command.actor, legacy)
        if isinstance(operation, Complete):
            return self._complete_problem(kind)
        if (
            isinstance(operation, RecordEvidence)
            and operation.tool
            and kind is not ActorKind.SYSTEM
        ):
            return "only the harness says which tool a result came from (evidence `tool`)"
        if isinstance(operation, InvalidateFact):
            return self._invalidate_problem(operation)
        if isinstance(operation, ResolveDecision):
            return self._resolve_problem(operation, kind)
        if isinstance(operation, AddRelation):
            return self._relation_problem(operation)
        if isinstance(operation, RunEnded):
            return self._run_ended_problem(operation)
        return None

    def apply(
        self,
        command: TaskCommand,
        now: datetime,
        *,
        checked: bool = False,
        gates: list[GateResult] | None = None,
        fenced: bool = True,
    ) -> LedgerReceipt:
        """`checked`: the gateway's check already passed (an update's validator, which
        Temporal does not run again on replay): apply without asking again, so a rule that
        tightens later never changes what a recorded history did. `gates`: a completion's
        verdicts, evaluated under the contract in force (without them, the built-in gates of
        the default contract, as tasks before contracts were judged). `fenced`: an applied
        write raises its fence's mark (False: a history from before fencing, which kept none)."""
        problem = None if checked else self.check(command)
        if problem is not None:
            return LedgerReceipt(accepted=False, reason=problem)
        content = command.fingerprint()
        state = self.state
        self._tally.changing(
            touched=self._touched(command.operation),
            lists=(
                state.facts,
                state.evidence,
                state.decisions,
                state.relations,
                state.submissions,
                state.reviews,
                state.acceptances,
            ),
            maps=(state.keys, state.key_ids),
        )
        receipt = self._keys().once(
            command.idempotency_key, content, lambda: self._apply(command, now, gates)
        )
        self._tally.changed()
        if fenced and command.fence is not None and not receipt.duplicate:
            self._mark(command.fence)
        if isinstance(command.operation, Complete):  # (again) what the gates said
            receipt.gates = self._last_gates()
        return receipt

    def _keys(self) -> IdempotencyKeys:
        return IdempotencyKeys(self.state.keys, self.state.key_ids)

    def stale_writer(self, command: TaskCommand) -> str | None:
        """Why the command's writer is stale (its holder wrote with a newer epoch since), or
        None. A command whose key was applied is answered as a duplicate, whatever its epoch:
        nothing changes either way."""
        if self.seen(command):
            return None
        return stale_writer_problem(self.state.writer_epochs, command.fence, self.task.id)

    def _mark(self, fence: WriterFence) -> None:
        """Raise the fence's mark, and keep the size exact: the marks change in place."""
        before = _marks_bytes(self.state.writer_epochs)
        mark_written(self.state.writer_epochs, fence)
        self._tally.add(_marks_bytes(self.state.writer_epochs) - before)

    def seen(self, command: TaskCommand) -> bool:
        """Its key was applied already: applying it again answers "duplicate"."""
        return self._keys().seen(command.idempotency_key)

    # -- reading ----------------------------------------------------------------------------

    def context(self, recent: int = RECENT_EVIDENCE) -> TaskContext:
        facts = self.state.facts
        decisions = self.state.decisions
        return TaskContext(
            task=self.task,
            valid_facts=[f for f in facts if f.valid],
            invalidated_facts=sum(1 for f in facts if not f.valid),
            open_decisions=[d for d in decisions if d.status is DecisionStatus.PROPOSED],
            resolved_decisions=[d for d in decisions if d.status is not DecisionStatus.PROPOSED],
            recent_evidence=self.state.evidence[-recent:],
            evidence_count=len(self.state.evidence),
            relations=self.state.relations,
            submissions=self.state.submissions,
            reviews=self.state.reviews,
            last_gates=self._last_gates(),
        )

    def _last_gates(self) -> list[GateResult]:
        acceptances = self.state.acceptances
        if not acceptances:
            return []
        last = acceptances[-1].completion
        return [gate for gate in acceptances if gate.completion == last]

    # -- checks -----------------------------------------------------------------------------

    def _size_problem(self, command: TaskCommand) -> str | None:
        """A command that would take the ledger past its bound: refused before it is
        journalled, so the state continue-as-new carries stays far below Temporal's limit."""
        operation = command.operation
        if isinstance(operation, SetStatus) and operation.status.is_terminal:
            return None  # cancelling a full task ends it: its state grows no more
        finishing = isinstance(operation, FINISHING)
        bound = MAX_LEDGER_BYTES + (FINISHING_RESERVE_BYTES if finishing else 0)
        if self.size + self.growth(command) <= bound:
            return None
        full = f"task '{self.task.id}' is full ({self.size:,} of {MAX_LEDGER_BYTES:,} bytes)"
        if finishing:
            return f"{full}, and so is its reserve for finishing it: cancel it and split its work"
        return f"{full}: split it into subtasks (harness task split {self.task.id} TITLE)"

    def growth(self, command: TaskCommand) -> int:
        """At most what `command` adds: what it says, and what it copies from elsewhere."""
        operation = command.operation
        extra = 0
        if isinstance(operation, BindRun):  # the run whose submission it repairs
            extra = MAX_NAME_CHARS
        elif isinstance(operation, Submit | AddRelation):  # run: references named by id
            extra = REF_GROWTH_BYTES * (
                len(operation.evidence_ids) if isinstance(operation, Submit) else 2
            )
        return growth_estimate(command, command.idempotency_key, extra)

    def _status_problem(self, operation: SetStatus, kind: ActorKind) -> str | None:
        if kind is ActorKind.AGENT and self.task.status is TaskStatus.IN_REVIEW:
            return "the task is IN_REVIEW: only people and systems move it on"
        if operation.status in (TaskStatus.DONE, TaskStatus.IN_REVIEW):
            way = (
                "`complete`, whose gates decide"
                if operation.status is TaskStatus.DONE
                else ("a submission")
            )
            return f"a task becomes {operation.status.value} only by {way}"
        if kind is ActorKind.AGENT and operation.status not in AGENT_STATUSES:
            return (
                f"an agent cannot set a task {operation.status.value}: completing, "
                "cancelling and submitting are for people and systems"
            )
        if operation.status is self.task.status:
            return f"task '{self.task.id}' is already {operation.status.value}"
        return None

    def _submit_problem(self) -> str | None:
        pending = self._pending_submission()
        if pending is not None:
            return f"submission '{pending.id}' is still under review"
        if self.task.status is not TaskStatus.ACTIVE:
            status = self.task.status.value
            return f"task '{self.task.id}' is {status}: only an ACTIVE task is submitted"
        return None

    def _agent_problem(self, command: TaskCommand, kind: ActorKind) -> str | None:
        """What the README says an agent may never do, whoever let it try (0.10)."""
        if kind is not ActorKind.AGENT:
            return None
        operation = command.operation
        if isinstance(operation, Submit):
            return "an agent can never submit a task: the harness submits a run's work"
        if isinstance(operation, InvalidateFact):
            fact = self._fact(operation.fact_id)
            if fact is not None and _kind_of(fact.recorded_by) is not ActorKind.AGENT:
                return (
                    f"fact '{fact.id}' was recorded by {fact.recorded_by}: an agent may "
                    "invalidate only what an agent recorded"
                )
        if isinstance(operation, SetStatus) and self.task.status is TaskStatus.BLOCKED:
            held_by = self.task.status_set_by
            if held_by is not None and _kind_of(held_by) is not ActorKind.AGENT:
                return (
                    f"task '{self.task.id}' was BLOCKED by {held_by}: an agent cannot lift "
                    "a hold a person or a system put on"
                )
        return None

    def _review_problem(
        self, operation: ReviewSubmission, kind: ActorKind, actor: str, legacy: bool
    ) -> str | None:
        if kind is ActorKind.AGENT:
            return "an agent can never review a submission"
        if self.task.status is not TaskStatus.IN_REVIEW:
            return f"task '{self.task.id}' is {self.task.status.value}, not IN_REVIEW"
        submission = self._submission(operation.submission_id)
        if submission is None:
            return f"task '{self.task.id}' has no submission '{operation.submission_id}'"
        if submission.status is not SubmissionStatus.PENDING:
            return f"submission '{submission.id}' was already {submission.status.value}"
        same = _same_spelling if legacy else same_actor
        if same(submission.submitted_by, actor):
            who = (
                actor
                if submission.submitted_by == actor
                else f"{actor} ({submission.submitted_by})"
            )
            return f"{who} submitted '{submission.id}': nobody reviews their own work"
        return None

    def _complete_problem(self, kind: ActorKind) -> str | None:
        if kind is ActorKind.AGENT:
            return "an agent can never complete a task"
        if self.task.status is not TaskStatus.IN_REVIEW:
            return (
                f"task '{self.task.id}' is {self.task.status.value}: only a task IN_REVIEW, with "
                "a submission, can be completed"
            )
        return None

    def _pending_submission(self) -> Submission | None:
        pending = [s for s in self.state.submissions if s.status is SubmissionStatus.PENDING]
        return pending[-1] if pending else None

    def gate_input(self) -> GateInput:
        """The latest submission and the evidence records it references, for the gates."""
        latest = self.state.submissions[-1] if self.state.submissions else None
        by_id = {e.id: e for e in self.state.evidence}
        found: list[Evidence] = []
        unknown: list[str] = []
        for ref in latest.evidence_ids if latest else []:
            resolved = self._evidence_ref(EntityRef(kind=EntityKind.EVIDENCE, id=ref)).id
            if resolved in by_id:
                found.append(by_id[resolved])
            else:
                unknown.append(ref)
        return GateInput(task=self.task, submission=latest, evidence=found, unknown=unknown)

    def _invalidate_problem(self, operation: InvalidateFact) -> str | None:
        fact = self._fact(operation.fact_id)
        if fact is None:
            return f"task '{self.task.id}' has no fact '{operation.fact_id}'"
        if not fact.valid:
            return f"fact '{fact.id}' was already invalidated: {fact.invalidation_reason}"
        return None

    def _resolve_problem(self, operation: ResolveDecision, kind: ActorKind) -> str | None:
        if kind is ActorKind.AGENT:
            return "an agent can never resolve a decision"
        decision = self._decision(operation.decision_id)
        if decision is None:
            return f"task '{self.task.id}' has no decision '{operation.decision_id}'"
        if decision.status is not DecisionStatus.PROPOSED:
            return f"decision '{decision.id}' was already {decision.status.value}"
        return None

    def _relation_problem(self, operation: AddRelation) -> str | None:
        if operation.type in GRAPH_RELATIONS:
            return f"{operation.type.value} edges between tasks go through the task graph"
        for ref in (operation.source, operation.target):
            if not self._known(ref):
                return f"task '{self.task.id}' has no {ref.kind.value.lower()} '{ref.id}'"
        if operation.type is RelationType.SUPPORTS and not (
            operation.source.kind is EntityKind.EVIDENCE
            and operation.target.kind in (EntityKind.FACT, EntityKind.DECISION)
        ):
            return "SUPPORTS runs from evidence to the fact or decision it backs"
        return None

    def _run_ended_problem(self, operation: RunEnded) -> str | None:
        if not any(run.run_id == operation.run_id for run in self.task.runs):
            return f"run '{operation.run_id}' is not bound to task '{self.task.id}'"
        return None

    def _known(self, ref: EntityRef) -> bool:
        """Records of this ledger must exist; tasks, runs and waits live elsewhere. Evidence
        may also be named by what it points at in a run bound to this task
        (`run:RUN_ID/node:NODE_ID`), before the run has recorded it."""
        if ref.kind is EntityKind.EVIDENCE and self._bound_run_ref(ref.id):
            return True
        records: dict[EntityKind, list[str]] = {
            EntityKind.FACT: [f.id for f in self.state.facts],
            EntityKind.EVIDENCE: [e.id for e in self.state.evidence],
            EntityKind.DECISION: [d.id for d in self.state.decisions],
        }
        return ref.id in records[ref.kind] if ref.kind in records else True

    def _bound_run_ref(self, ref: str) -> bool:
        run_id = ref.removeprefix("run:").split("/", 1)[0] if ref.startswith("run:") else None
        return run_id is not None and any(run.run_id == run_id for run in self.task.runs)

    def _evidence_ref(self, ref: EntityRef) -> EntityRef:
        """Evidence named by what it points at in a run is named by its id once it is
        recorded (only `run:` references: a recorded id never changes)."""
        if ref.kind is not EntityKind.EVIDENCE or not ref.id.startswith("run:"):
            return ref
        latest = reversed(self.state.evidence)
        found = next((e for e in latest if e.content_ref == ref.id), None)
        return EntityRef(kind=EntityKind.EVIDENCE, id=found.id) if found else ref

    # -- changes ----------------------------------------------------------------------------

    def _touched(self, operation: TaskOperation) -> list[BaseModel]:
        """The records `operation` may change in place (the task always: its status, its
        runs); what it appends is measured as it is appended."""
        state = self.state
        touched: list[BaseModel | None] = [self.task]
        if isinstance(operation, SetStatus):
            touched += [s for s in state.submissions if s.status is SubmissionStatus.PENDING]
        elif isinstance(operation, ReviewSubmission):
            touched.append(self._submission(operation.submission_id))
        elif isinstance(operation, InvalidateFact):
            touched.append(self._fact(operation.fact_id))
        elif isinstance(operation, ResolveDecision):
            touched.append(self._decision(operation.decision_id))
        elif isinstance(operation, RecordEvidence):  # relations that named it by reference
            touched += [r for r in state.relations if "run:" in (r.source.id[:4], r.target.id[:4])]
        return [record for record in touched if record is not None]

    def _apply(
        self, command: TaskCommand, now: datetime, gates: list[GateResult] | None
    ) -> tuple[str | None, str]:
        operation, actor, state = command.operation, command.actor, self.state
        if isinstance(operation, SetStatus):
            self.task.status = operation.status
            self.task.status_reason = operation.reason
            self.task.status_set_by = actor
            for pending in state.submissions:  # a task taken out of review: nothing is pending
                if pending.status is SubmissionStatus.PENDING:
                    pending.status = SubmissionStatus.WITHDRAWN
            return self.task.id, f"task is {operation.status.value}"
        if isinstance(operation, Submit):
            refs = [
                self._evidence_ref(EntityRef(kind=EntityKind.EVIDENCE, id=r)).id
                for r in operation.evidence_ids
            ]
            submission = Submission(
                id=f"sub-{len(state.submissions) + 1}",
                summary=operation.summary,
                evidence_ids=refs,
                run_id=operation.run_id,
                submitted_by=actor,
                submitted_at=now,
            )
            state.submissions.append(submission)
            self.task.status = TaskStatus.IN_REVIEW
            return submission.id, "submitted: the task is IN_REVIEW"
        if isinstance(operation, ReviewSubmission):
            reviewed = self._submission(operation.submission_id)
            assert reviewed is not None  # checked
            reviewed.status = (
                SubmissionStatus.APPROVED
                if operation.approve
                else SubmissionStatus.CHANGES_REQUESTED
            )
            review = Review(
                id=f"rev-{len(state.reviews) + 1}",
                submission_id=reviewed.id,
                approved=operation.approve,
                comment=operation.comment,
                reviewed_by=actor,
                reviewed_at=now,
            )
            state.reviews.append(review)
            if not operation.approve:
                self.task.status = TaskStatus.ACTIVE
                return review.id, "changes requested: the task is ACTIVE again"
            return review.id, "approved"
        if isinstance(operation, Complete):
            completion = (state.acceptances[-1].completion if state.acceptances else 0) + 1
            if gates is None:
                default = ContractInForce(scope=self.task.scope)
                gates = built_in_gates(default, self.gate_input(), now)
            recorded = [g.model_copy(update={"completion": completion}) for g in gates]
            state.acceptances.extend(recorded)
            failed = [g.gate for g in recorded if not g.passed]
            if failed:
                return self.task.id, f"not done: the gate(s) {', '.join(failed)} failed"
            self.task.status = TaskStatus.DONE
            self.task.status_reason = operation.reason
            return self.task.id, "task is DONE: every gate passed"
        if isinstance(operation, RecordFact):
            fact = Fact(
                id=f"fact-{len(state.facts) + 1}",
                statement=operation.statement,
                source=operation.source,
                confidence=operation.confidence,
                run_id=operation.run_id,
                recorded_by=actor,
                recorded_at=now,
            )
            state.facts.append(fact)
            return fact.id, "fact recorded"
        if isinstance(operation, InvalidateFact):
            invalid = self._fact(operation.fact_id)
            assert invalid is not None  # checked
            invalid.valid = False
            invalid.invalidated_by, invalid.invalidated_at = actor, now
            invalid.invalidation_reason = operation.reason
            return invalid.id, "fact invalidated"
        if isinstance(operation, RecordEvidence):
            evidence = Evidence(
                id=f"ev-{len(state.evidence) + 1}",
                recorded_by=actor,
                recorded_at=now,
                **operation.model_dump(exclude={"op"}),
            )
            state.evidence.append(evidence)
            for relation in state.relations:  # those that named it by what it points at
                relation.source = self._evidence_ref(relation.source)
                relation.target = self._evidence_ref(relation.target)
            return evidence.id, "evidence recorded"
        if isinstance(operation, ProposeDecision):
            decision = Decision(
                id=f"dec-{len(state.decisions) + 1}",
                question=operation.question,
                proposal=operation.proposal,
                proposed_by=actor,
                proposed_at=now,
            )
            state.decisions.append(decision)
            return decision.id, "decision proposed"
        if isinstance(operation, ResolveDecision):
            resolved = self._decision(operation.decision_id)
            assert resolved is not None  # checked
            resolved.resolve(operation.accept, actor, now, operation.reason)
            return resolved.id, f"decision {resolved.status.value}"
        if isinstance(operation, AddRelation):
            relation = Relation(
                id=f"rel-{len(state.relations) + 1}",
                source=self._evidence_ref(operation.source),
                target=self._evidence_ref(operation.target),
                type=operation.type,
                recorded_by=actor,
                recorded_at=now,
            )
            state.relations.append(relation)
            return relation.id, "relation recorded"
        if isinstance(operation, BindRun):
            if not any(run.run_id == operation.run_id for run in self.task.runs):
                repair_of = self._changes_requested_of()
                binding = RunBinding(run_id=operation.run_id, bound_at=now, repair_of=repair_of)
                self.task.runs.append(binding)
                if repair_of is not None:
                    return operation.run_id, f"run bound: a repair of {repair_of}"
            return operation.run_id, "run bound"
        for run in self.task.runs:
            if run.run_id == operation.run_id:
                run.ended = operation.status
        return operation.run_id, f"run ended {operation.status}"

    def _changes_requested_of(self) -> str | None:
        """The run whose submission was sent back, when the latest one was: a run bound now
        works on the comments, as that run's repair."""
        latest = self.state.submissions[-1] if self.state.submissions else None
        if latest is not None and latest.status is SubmissionStatus.CHANGES_REQUESTED:
            return latest.run_id
        return None

    def sent_back_evidence(self) -> list[Evidence]:
        """The evidence the latest submission rests on, when it was sent back for changes."""
        latest = self.state.submissions[-1] if self.state.submissions else None
        if latest is None or latest.status is not SubmissionStatus.CHANGES_REQUESTED:
            return []
        return self.gate_input().evidence

    def review_notes(self) -> list[str]:
        """The comments of the reviews that sent the latest submission back."""
        latest = self.state.submissions[-1] if self.state.submissions else None
        if latest is None or latest.status is not SubmissionStatus.CHANGES_REQUESTED:
            return []
        return [
            f"{review.reviewed_by} on {latest.id}: {review.comment}"
            for review in self.state.reviews
            if review.submission_id == latest.id and not review.approved and review.comment
        ]

    def _fact(self, fact_id: str) -> Fact | None:
        return next((f for f in self.state.facts if f.id == fact_id), None)

    def _submission(self, submission_id: str) -> Submission | None:
        return next((s for s in self.state.submissions if s.id == submission_id), None)

    def _decision(self, decision_id: str) -> Decision | None:
        return next((d for d in self.state.decisions if d.id == decision_id), None)


def _names(operation: TaskOperation) -> dict[str, str | None]:
    """The names an operation stores or looks up, which its model does not bound."""
    names = {
        name: getattr(operation, name, None)
        for name in ("run_id", "node_id", "fact_id", "decision_id", "submission_id")
    }
    if isinstance(operation, RunEnded):
        names["status"] = operation.status
    return names


def _marks_bytes(marks: dict[str, int]) -> int:
    """What the fence marks add to the ledger's JSON: nothing while empty (left out), else the
    field, its name and the comma before it (the task always comes first)."""
    if not marks:
        return 0
    return json_bytes({"writer_epochs": marks}) - len("{}") + len(",")


def _legacy_actor_problem(actor: str) -> str | None:
    """Before 0.10 an actor was only parsed: no bound on its length."""
    try:
        parse_actor(actor)
    except ValueError as error:
        return str(error)
    return None


def _records(state: TaskLedgerState) -> int:
    """What the record count of before 0.10 counted (every list but the keys)."""
    beliefs = len(state.facts) + len(state.evidence) + len(state.decisions) + len(state.relations)
    return beliefs + len(state.submissions) + len(state.reviews) + len(state.acceptances)


def _same_spelling(first: str, second: str) -> bool:
    """Before 0.10: one actor when kind (any case) and name (exactly) match, so `human:Alice`
    and `human:alice` were two."""
    try:
        return parse_actor(first) == parse_actor(second)
    except ValueError:
        return first == second


def _kind_of(actor: str) -> ActorKind | None:
    """The kind of a recorded actor (recorded ones passed the gateway), or None."""
    try:
        return parse_actor(actor)[0]
    except ValueError:
        return None
