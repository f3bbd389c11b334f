"""The task ledger's gateway: every rule is checked before anything changes."""

from __future__ import annotations

import pytest

from harness.governance.task_commands import (
    AddRelation,
    BindRun,
    Complete,
    InvalidateFact,
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
from harness.governance.task_ledger import TaskLedger, TaskLedgerState
from harness.governance.work import (
    EntityKind,
    EntityRef,
    EvidenceKind,
    RelationType,
    TaskRecord,
    TaskStatus,
)
from tests.factories import START

AGENT, HUMAN, SYSTEM = "agent:planner", "human:ops", "system:harness"
FACT = RecordFact(statement="order A-1001 is eligible", source="policy", confidence=0.9)
EVIDENCE = RecordEvidence(
    kind=EvidenceKind.TOOL, summary="policy lookup", content_ref="run:r/node:p"
)


def ledger(status: TaskStatus = TaskStatus.ACTIVE) -> TaskLedger:
    task = TaskRecord(
        id="task-1",
        scope="shop-A",
        title="refund",
        status=status,
        created_by=HUMAN,
        created_at=START,
    )
    return TaskLedger(TaskLedgerState(task=task))


def command(operation: TaskOperation, actor: str = AGENT, key: str | None = None) -> TaskCommand:
    return TaskCommand(task_id="task-1", actor=actor, operation=operation, idempotency_key=key)


def apply(book: TaskLedger, operation: TaskOperation, actor: str = AGENT) -> str:
    receipt = book.apply(command(operation, actor), START)
    assert receipt.accepted, receipt.reason
    assert receipt.id is not None
    return receipt.id


def refused(book: TaskLedger, operation: TaskOperation, actor: str = AGENT) -> str:
    before = book.state.model_copy(deep=True)
    receipt = book.apply(command(operation, actor), START)
    assert not receipt.accepted
    assert book.state == before  # nothing changed
    return receipt.reason


def test_an_agent_records_facts_evidence_decisions_and_relations() -> None:
    book = ledger()
    fact = apply(book, FACT)
    evidence = apply(book, EVIDENCE)
    apply(book, ProposeDecision(question="refund in full?", proposal="yes"))
    source = EntityRef(kind=EntityKind.EVIDENCE, id=evidence)
    target = EntityRef(kind=EntityKind.FACT, id=fact)
    apply(book, AddRelation(source=source, target=target, type=RelationType.SUPPORTS))
    context = book.context()
    assert [f.id for f in context.valid_facts] == ["fact-1"]
    assert [e.id for e in context.recent_evidence] == ["ev-1"]
    assert [d.status.value for d in context.open_decisions] == ["PROPOSED"]
    assert context.relations[0].source == source
    assert context.valid_facts[0].recorded_by == AGENT


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        (ResolveDecision(decision_id="dec-1", accept=True, reason="ok"), "never resolve"),
        (SetStatus(status=TaskStatus.DONE), "DONE only by `complete`, whose gates decide"),
        (Complete(), "an agent can never complete a task"),
        (SetStatus(status=TaskStatus.CANCELLED), "cannot set a task CANCELLED"),
        (SetStatus(status=TaskStatus.IN_REVIEW), "IN_REVIEW only by a submission"),
    ],
)
def test_an_agent_never_resolves_completes_cancels_or_sets_review(
    operation: TaskOperation, reason: str
) -> None:
    book = ledger()
    apply(book, ProposeDecision(question="refund in full?", proposal="yes"))
    assert reason in refused(book, operation)


def test_a_person_resolves_a_decision_once_with_a_reason() -> None:
    book = ledger()
    decision = apply(book, ProposeDecision(question="refund in full?", proposal="yes"))
    resolve = ResolveDecision(decision_id=decision, accept=False, reason="partial damage")
    apply(book, resolve, HUMAN)
    assert book.context().resolved_decisions[0].status.value == "REJECTED"
    assert "already REJECTED" in refused(book, resolve, HUMAN)


def test_a_finished_task_is_final() -> None:
    book = ledger()
    apply(book, SetStatus(status=TaskStatus.CANCELLED), HUMAN)
    assert "a finished task is final" in refused(book, FACT)
    assert "a finished task is final" in refused(book, SetStatus(status=TaskStatus.ACTIVE), HUMAN)


def test_a_run_bound_before_the_task_finished_may_still_report_how_it_ended() -> None:
    book = ledger()
    apply(book, BindRun(run_id="run-1"), SYSTEM)
    apply(book, SetStatus(status=TaskStatus.CANCELLED), HUMAN)
    apply(book, RunEnded(run_id="run-1", status="CANCELLED"), SYSTEM)
    assert book.task.runs[0].ended == "CANCELLED"
    assert "not bound" in refused(book, RunEnded(run_id="run-2", status="SUCCEEDED"), SYSTEM)


def test_an_invalidated_fact_keeps_its_trail() -> None:
    book = ledger()
    fact = apply(book, FACT)
    apply(book, InvalidateFact(fact_id=fact, reason="the order was disputed"), HUMAN)
    (kept,) = book.state.facts
    assert (kept.valid, kept.invalidated_by, kept.invalidation_reason) == (
        False,
        HUMAN,
        "the order was disputed",
    )
    assert book.context().valid_facts == [] and book.context().invalidated_facts == 1
    assert "already invalidated" in refused(book, InvalidateFact(fact_id=fact, reason="again"))


def test_evidence_cannot_be_invalidated() -> None:
    book = ledger()
    evidence = apply(book, EVIDENCE)
    assert "no fact 'ev-1'" in refused(book, InvalidateFact(fact_id=evidence, reason="wrong"))


def test_the_same_command_under_one_key_is_applied_once_and_other_content_is_refused() -> None:
    book = ledger()
    first = book.apply(command(FACT, key="k1"), START)
    again = book.apply(command(FACT, key="k1"), START)
    other = command(FACT.model_copy(update={"confidence": 0.1}), key="k1")
    assert (first.accepted, first.duplicate) == (True, False)
    assert (again.accepted, again.duplicate, again.id) == (True, True, first.id)
    assert len(book.state.facts) == 1
    assert book.check(other) == "idempotency key 'k1' was already used with other content"


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        (
            AddRelation(
                source=EntityRef(kind=EntityKind.EVIDENCE, id="ev-9"),
                target=EntityRef(kind=EntityKind.FACT, id="fact-1"),
                type=RelationType.SUPPORTS,
            ),
            "no evidence 'ev-9'",
        ),
        (
            AddRelation(
                source=EntityRef(kind=EntityKind.FACT, id="fact-1"),
                target=EntityRef(kind=EntityKind.FACT, id="fact-1"),
                type=RelationType.SUPPORTS,
            ),
            "SUPPORTS runs from evidence",
        ),
        (
            AddRelation(
                source=EntityRef(kind=EntityKind.TASK, id="task-1"),
                target=EntityRef(kind=EntityKind.TASK, id="task-2"),
                type=RelationType.DEPENDS_ON,
            ),
            "go through the task graph",
        ),
    ],
)
def test_a_relation_must_join_records_that_exist_in_a_sensible_direction(
    operation: TaskOperation, reason: str
) -> None:
    book = ledger()
    apply(book, FACT)
    assert reason in refused(book, operation)


def test_a_command_for_another_task_or_from_a_malformed_actor_is_refused() -> None:
    book = ledger()
    stray = TaskCommand(task_id="task-2", actor=AGENT, operation=FACT)
    assert book.check(stray) == "the command is for task 'task-2', not 'task-1'"
    assert "must look like human:NAME" in refused(book, FACT, actor="robot")


def test_evidence_named_by_what_it_points_at_in_a_bound_run_is_joined_when_recorded() -> None:
    book = ledger()
    apply(book, BindRun(run_id="run-1"), SYSTEM)
    fact = apply(book, FACT)
    pointer = EntityRef(kind=EntityKind.EVIDENCE, id="run:run-1/node:policy")
    target = EntityRef(kind=EntityKind.FACT, id=fact)
    apply(book, AddRelation(source=pointer, target=target, type=RelationType.SUPPORTS))
    assert book.state.relations[0].source == pointer  # not recorded yet
    evidence = RecordEvidence(
        kind=EvidenceKind.TOOL, summary="policy", content_ref="run:run-1/node:policy"
    )
    recorded = apply(book, evidence, SYSTEM)
    assert book.state.relations[0].source == EntityRef(kind=EntityKind.EVIDENCE, id=recorded)


def test_evidence_named_by_a_run_that_is_not_bound_is_refused() -> None:
    book = ledger()
    fact = apply(book, FACT)
    pointer = EntityRef(kind=EntityKind.EVIDENCE, id="run:run-9/node:policy")
    target = EntityRef(kind=EntityKind.FACT, id=fact)
    relation = AddRelation(source=pointer, target=target, type=RelationType.SUPPORTS)
    assert "no evidence 'run:run-9/node:policy'" in refused(book, relation)


@pytest.mark.parametrize(
    "operation", [BindRun(run_id="run-9"), RunEnded(run_id="run-1", status="SUCCEEDED")]
)
def test_only_people_and_systems_say_which_runs_work_on_a_task_and_how_they_ended(
    operation: TaskOperation,
) -> None:
    book = ledger()
    apply(book, BindRun(run_id="run-1"), SYSTEM)
    assert "an agent cannot say which runs" in refused(book, operation)


def test_an_agent_cannot_move_a_task_that_is_in_review() -> None:
    book = ledger(TaskStatus.IN_REVIEW)
    assert "IN_REVIEW: only people and systems" in refused(
        book, SetStatus(status=TaskStatus.ACTIVE)
    )
    apply(book, FACT)  # it may still record what it finds


def test_a_full_task_takes_no_more_records_and_says_to_split_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book = ledger()
    monkeypatch.setattr("harness.governance.task_ledger.MAX_LEDGER_BYTES", book.size + 1100)
    apply(book, FACT)
    apply(book, EVIDENCE)
    assert "is full (" in refused(book, FACT)
    assert refused(book, FACT).endswith("split it into subtasks (harness task split task-1 TITLE)")
    apply(book, SetStatus(status=TaskStatus.BLOCKED))  # what finishes it has a reserve


def submitted(book: TaskLedger, evidence: list[str] | None = None) -> str:
    return apply(book, Submit(summary="refunded", evidence_ids=evidence or []), SYSTEM)


def test_a_submission_puts_the_task_in_review_and_a_person_approves_it() -> None:
    book = ledger()
    submission = submitted(book)
    assert book.task.status is TaskStatus.IN_REVIEW
    assert "still under review" in refused(book, Submit(summary="again"), SYSTEM)
    apply(book, ReviewSubmission(submission_id=submission, approve=True), HUMAN)
    assert book.state.submissions[0].status.value == "APPROVED"


@pytest.mark.parametrize(
    ("actor", "reason"),
    [(AGENT, "an agent can never review"), (SYSTEM, "nobody reviews their own work")],
)
def test_nobody_reviews_their_own_work_and_no_agent_reviews_at_all(actor: str, reason: str) -> None:
    book = ledger()
    submission = submitted(book)
    assert reason in refused(book, ReviewSubmission(submission_id=submission, approve=True), actor)


def test_changes_requested_send_the_task_back_to_work() -> None:
    book = ledger()
    submission = submitted(book)
    review = ReviewSubmission(submission_id=submission, approve=False, comment="check the dispute")
    apply(book, review, HUMAN)
    assert book.task.status is TaskStatus.ACTIVE
    assert book.context().reviews[0].comment == "check the dispute"
    submitted(book)  # a repair submits again
    assert [s.status.value for s in book.state.submissions] == ["CHANGES_REQUESTED", "PENDING"]


def test_completion_records_every_gate_and_is_done_only_when_all_pass() -> None:
    book = ledger()
    evidence = apply(book, EVIDENCE)
    submission = submitted(book, [evidence, "ev-9"])
    not_yet = book.apply(command(Complete(), HUMAN), START)
    assert not_yet.accepted and book.task.status is TaskStatus.IN_REVIEW
    assert [(g.gate, g.passed, g.reason) for g in not_yet.gates] == [
        ("approved-review", False, "submission 'sub-1' is PENDING, not APPROVED"),
        ("completion-evidence", False, "no evidence ev-9 in this task's ledger"),
    ]
    apply(book, ReviewSubmission(submission_id=submission, approve=True), HUMAN)
    still = book.apply(command(Complete(), HUMAN), START)
    assert [g.passed for g in still.gates] == [True, False]
    assert len(book.state.acceptances) == 4  # every verdict is kept


def test_a_submission_on_evidence_of_its_task_approved_completes_the_task() -> None:
    book = ledger()
    apply(book, BindRun(run_id="run-1"), SYSTEM)
    submission = submitted(book, ["run:run-1/node:policy"])  # recorded later by the run
    apply(
        book,
        RecordEvidence(kind=EvidenceKind.TOOL, summary="p", content_ref="run:run-1/node:policy"),
        SYSTEM,
    )
    apply(book, ReviewSubmission(submission_id=submission, approve=True), HUMAN)
    done = book.apply(command(Complete(), HUMAN), START)
    assert [g.passed for g in done.gates] == [True, True]
    assert book.task.status is TaskStatus.DONE


def test_only_a_task_in_review_can_be_completed() -> None:
    assert "only a task IN_REVIEW" in refused(ledger(), Complete(), HUMAN)


def test_an_actor_written_differently_is_still_the_submitter() -> None:
    book = ledger()
    submission = apply(book, Submit(summary="done"), "human:alice")
    review = ReviewSubmission(submission_id=submission, approve=True)
    assert "nobody reviews their own work" in refused(book, review, "HUMAN: alice")


def test_a_task_taken_out_of_review_withdraws_its_pending_submission() -> None:
    book = ledger()
    submission = submitted(book)
    apply(book, SetStatus(status=TaskStatus.BLOCKED, reason="waiting on the bank"), HUMAN)
    assert book.state.submissions[0].status.value == "WITHDRAWN"
    review = ReviewSubmission(submission_id=submission, approve=True)
    assert "is BLOCKED, not IN_REVIEW" in refused(book, review, HUMAN)
    assert "only an ACTIVE task is submitted" in refused(book, Submit(summary="x"), SYSTEM)


def test_asking_again_under_one_key_says_again_what_the_gates_said() -> None:
    book = ledger()
    submitted(book)
    first = book.apply(command(Complete(), HUMAN, key="c1"), START)
    again = book.apply(command(Complete(), HUMAN, key="c1"), START)
    assert again.duplicate and again.gates == first.gates and not again.gates[0].passed


def test_an_update_the_validator_passed_is_applied_as_it_was_on_replay() -> None:
    """A rule added later must not change what a recorded history did."""
    book = ledger()
    receipt = book.apply(command(SetStatus(status=TaskStatus.DONE), HUMAN), START, checked=True)
    assert receipt.accepted and book.task.status is TaskStatus.DONE


def test_an_empty_evidence_id_is_refused_before_it_reaches_the_gateway() -> None:
    with pytest.raises(ValueError, match="at least 1 character"):
        Submit(summary="x", evidence_ids=[""])


def test_a_run_bound_after_changes_were_requested_is_a_repair_of_the_run_that_submitted() -> None:
    book = ledger()
    apply(book, BindRun(run_id="r-1"), SYSTEM)
    refund = RecordEvidence(
        kind=EvidenceKind.TOOL,
        summary="refund",
        content_ref="run:r-1/node:refund",
        run_id="r-1",
        node_id="refund",
        tool="submit_refund",
    )
    apply(book, refund, SYSTEM)
    apply(
        book, Submit(summary="refunded", evidence_ids=["run:r-1/node:refund"], run_id="r-1"), SYSTEM
    )
    assert book.sent_back_evidence() == []
    apply(
        book,
        ReviewSubmission(submission_id="sub-1", approve=False, comment="check disputes"),
        HUMAN,
    )
    assert book.review_notes() == ["human:ops on sub-1: check disputes"]
    assert [e.tool for e in book.sent_back_evidence()] == ["submit_refund"]
    receipt = book.apply(command(BindRun(run_id="r-2"), SYSTEM), START)
    assert receipt.reason == "run bound: a repair of r-1"
    assert book.task.runs[-1].repair_of == "r-1"
    assert book.task.runs[0].repair_of is None


def test_a_completion_records_the_gates_it_is_given_under_the_contract_in_force() -> None:
    from harness.governance.gates import built_in_gates
    from harness.governance.host_contract import Contract, in_force
    from harness.governance.work import GateResult

    book = ledger()
    submitted(book)
    apply(book, ReviewSubmission(submission_id="sub-1", approve=True), HUMAN)
    held = in_force(Contract(required_checks=["dispute-status-checked"]), [], "shop-A", None)
    extra = GateResult(gate="dispute-status-checked", passed=False, reason="not checked")
    gates = [*built_in_gates(held, book.gate_input(), START), extra]
    receipt = book.apply(command(Complete(), HUMAN), START, gates=gates)
    assert [g.gate for g in receipt.gates] == [
        "approved-review",
        "completion-evidence",
        "dispute-status-checked",
    ]
    assert book.task.status is TaskStatus.IN_REVIEW
    assert "dispute-status-checked failed" in receipt.reason


@pytest.mark.parametrize("actor", [AGENT, HUMAN])
def test_only_a_system_says_which_tool_a_result_came_from(actor: str) -> None:
    forged = RecordEvidence(kind=EvidenceKind.TOOL, summary="s", tool="check_dispute_status")
    assert "only the harness says which tool" in refused(ledger(), forged, actor)
    assert apply(ledger(), forged, SYSTEM) == "ev-1"
