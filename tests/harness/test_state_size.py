"""Entity state in bytes: each gateway knows what its state takes as JSON (exactly, without
measuring it again on every command), refuses what would take it past its bound with what to
do, and bounds every actor it stores."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.limits import MAX_ACTOR_CHARS, MAX_NAME_CHARS
from harness.evals.eval_report import (
    MAX_REPEAT,
    MAX_UNMET_BYTES,
    UNMET_TAIL_BYTES,
    EvalRequest,
    bounded_unmet,
    suite_problem,
)
from harness.governance.host_contract import Contract, Preset, RuleKind
from harness.governance.scope_rules import (
    PromoteLesson,
    ProposeLesson,
    ResolveLesson,
    RevokeRule,
    RulesCommand,
    RulesOperation,
    ScopeRules,
    ScopeRulesState,
    SetContract,
)
from harness.governance.state_size import json_bytes
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
from harness.governance.task_graph import (
    AddDependency,
    CreateTask,
    GraphCommand,
    StatusChanged,
    TaskGraph,
    TaskGraphState,
)
from harness.governance.task_ledger import (
    FINISHING_RESERVE_BYTES,
    LEGACY_MAX_RECORDS,
    MAX_LEDGER_BYTES,
    TaskLedger,
    TaskLedgerState,
)
from harness.governance.work import (
    SUMMARY_CHARS,
    EntityKind,
    EntityRef,
    EvidenceKind,
    RelationType,
    TaskRecord,
    TaskStatus,
)
from starter.cli.eval_files import load_cases
from tests.factories import START

TEXT = "é" * SUMMARY_CHARS  # two bytes a character: the most a text field takes
LONGEST_ACTOR = "human:" + "a" * (MAX_ACTOR_CHARS - len("human:"))
SYSTEM = "system:" + "s" * (MAX_ACTOR_CHARS - len("system:"))
NAME = "r" * MAX_NAME_CHARS
MAXIMAL_FACT = RecordFact(statement=TEXT, source=TEXT, confidence=0.123456789, run_id=NAME)


def ledger() -> TaskLedger:
    task = TaskRecord(
        id="task-1", scope="shop-A", title="t", created_by="human:ops", created_at=START
    )
    return TaskLedger(TaskLedgerState(task=task))


def command(
    operation: TaskOperation, actor: str = LONGEST_ACTOR, key: str | None = None
) -> TaskCommand:
    return TaskCommand(task_id="task-1", actor=actor, operation=operation, idempotency_key=key)


def maximal_life() -> list[TaskCommand]:
    """Every kind of command, each with its fields as long as they may be, in an order the
    gateway accepts: a run binds, the agent records, a person invalidates, resolves, reviews,
    completes; the run ends."""
    run = "r" * 190
    ref = f"run:{run}/n"  # names evidence the bound run has not recorded yet
    evidence = RecordEvidence(
        kind=EvidenceKind.TOOL,
        summary=TEXT,
        location=TEXT,
        content_ref=ref + "-" + "2" * (499 - len(ref)),
        run_id=NAME,
        node_id=NAME,
        tool="t" * 200,
    )
    relation = AddRelation(
        source=EntityRef(kind=EntityKind.EVIDENCE, id=ref),
        target=EntityRef(kind=EntityKind.FACT, id="fact-1"),
        type=RelationType.SUPPORTS,
    )
    operations: list[tuple[TaskOperation, str]] = [
        (BindRun(run_id=run), SYSTEM),
        (MAXIMAL_FACT, LONGEST_ACTOR),
        (relation, LONGEST_ACTOR),
        (evidence, SYSTEM),
        (evidence.model_copy(update={"content_ref": ref}), SYSTEM),  # the relation names it
        (InvalidateFact(fact_id="fact-1", reason=TEXT), LONGEST_ACTOR),
        (ProposeDecision(question=TEXT, proposal=TEXT), LONGEST_ACTOR),
        (ResolveDecision(decision_id="dec-1", accept=True, reason=TEXT), LONGEST_ACTOR),
        (SetStatus(status=TaskStatus.BLOCKED, reason=TEXT), LONGEST_ACTOR),
        (SetStatus(status=TaskStatus.ACTIVE, reason=TEXT), LONGEST_ACTOR),
        (Submit(summary=TEXT, evidence_ids=[ref, *([ref + "-9"] * 199)], run_id=run), SYSTEM),
        (ReviewSubmission(submission_id="sub-1", approve=False, comment="c" * 2000), LONGEST_ACTOR),
        (BindRun(run_id="q" * 200), SYSTEM),  # a repair of the run sent back
        (Submit(summary=TEXT, evidence_ids=["ev-2"], run_id=NAME), SYSTEM),
        (SetStatus(status=TaskStatus.ACTIVE, reason=TEXT), LONGEST_ACTOR),  # withdraws sub-2
        (Submit(summary=TEXT, evidence_ids=["ev-2"]), SYSTEM),
        (ReviewSubmission(submission_id="sub-3", approve=True, comment="c" * 2000), LONGEST_ACTOR),
        (Complete(reason=TEXT), LONGEST_ACTOR),
        (RunEnded(run_id=run, status="S" * MAX_NAME_CHARS), SYSTEM),
    ]
    return [
        command(operation, actor, key=f"{n:03d}" + "k" * 197)
        for n, (operation, actor) in enumerate(operations)
    ]


def test_a_ledger_knows_its_size_exactly_through_every_kind_of_command() -> None:
    book = ledger()
    assert book.size == json_bytes(book.state)  # measured once, when first asked
    for n, each in enumerate(maximal_life()):
        receipt = book.apply(each, START + timedelta(seconds=n))
        assert receipt.accepted, (each.operation.op, receipt.reason)
        assert book.size == json_bytes(book.state), each.operation.op
    assert book.task.status is TaskStatus.DONE
    again = book.apply(maximal_life()[1], START)  # a duplicate adds nothing
    assert again.duplicate and book.size == json_bytes(book.state)


def test_no_command_adds_more_than_the_gateway_reckoned_before_taking_it() -> None:
    book = ledger()
    for n, each in enumerate(maximal_life()):
        before, reckoned = book.size, book.growth(each)
        book.apply(each, START + timedelta(seconds=n))
        if not isinstance(each.operation, Complete):  # its gates are the contract's
            assert book.size - before <= reckoned, each.operation.op


def test_a_full_task_refuses_records_and_says_to_split_it_but_can_still_be_finished() -> None:
    book = ledger()
    book.apply(command(RecordEvidence(kind=EvidenceKind.TEST, summary="passes")), START)
    facts = 0
    while (receipt := book.apply(command(MAXIMAL_FACT, key=f"fact-{facts}"), START)).accepted:
        facts += 1
    assert receipt.reason.startswith("task 'task-1' is full (")
    assert receipt.reason.endswith(
        "bytes): split it into subtasks (harness task split task-1 TITLE)"
    )
    assert MAX_LEDGER_BYTES - 3_000 < book.size <= MAX_LEDGER_BYTES
    assert book.size == json_bytes(book.state)
    assert facts >= 200  # even with every field and the actor as long as they may be
    for refused in (
        ProposeDecision(question="q", proposal="p"),
        InvalidateFact(fact_id="fact-1", reason=TEXT),
        RecordEvidence(kind=EvidenceKind.TEST, summary="s"),
    ):
        assert "is full" in (book.check(command(refused, key="x" * 200)) or "")
    for finishing, actor in (
        (Submit(summary=TEXT, evidence_ids=["ev-1"]), "system:harness"),
        (ReviewSubmission(submission_id="sub-1", approve=True), "human:lead"),
        (Complete(), "human:ops"),
    ):
        receipt = book.apply(command(finishing, actor), START)
        assert receipt.accepted, receipt.reason
    assert book.task.status is TaskStatus.DONE


def test_a_full_task_whose_finishing_reserve_is_spent_can_still_be_cancelled() -> None:
    book = ledger()
    n = 0
    while book.apply(command(MAXIMAL_FACT, key=str(n)), START).accepted:
        n += 1
    toggles = [
        SetStatus(status=TaskStatus.BLOCKED, reason=TEXT),
        SetStatus(status=TaskStatus.ACTIVE),
    ]
    toggled = 0
    while (
        receipt := book.apply(command(toggles[toggled % 2], key=f"t{toggled}" + "k" * 190), START)
    ).accepted:
        toggled += 1
    assert "so is its reserve for finishing it: cancel it" in receipt.reason
    cancel = book.apply(command(SetStatus(status=TaskStatus.CANCELLED), key="c" * 200), START)
    assert cancel.accepted and book.task.status is TaskStatus.CANCELLED
    assert book.size < 2_000_000 * 0.65


def test_a_ledger_carried_through_continue_as_new_measures_itself_again() -> None:
    book = ledger()
    for n, each in enumerate(maximal_life()[:8]):
        book.apply(each, START + timedelta(seconds=n))
    carried = TaskLedgerState.model_validate_json(book.state.model_dump_json())
    assert TaskLedger(carried).size == book.size


@pytest.mark.parametrize("length", [MAX_ACTOR_CHARS + 1, 300_000])
def test_an_actor_too_long_is_refused_by_every_gateway(length: int) -> None:
    actor = "human:" + "a" * (length - len("human:"))
    said = f"actor: at most {MAX_ACTOR_CHARS:,} characters, not {length:,}"
    assert ledger().check(command(MAXIMAL_FACT, actor)) == said
    graph = TaskGraph(TaskGraphState(scope="s"))
    assert (
        graph.check(GraphCommand(scope="s", actor=actor, operation=CreateTask(title="t"))) == said
    )
    rules = ScopeRules("s", ScopeRulesState())
    lesson = ProposeLesson(fact="f", question="q", proposal="p")
    assert rules.check(RulesCommand(scope="s", actor=actor, operation=lesson)) == said


def test_the_longest_actor_is_taken_and_stored_whole() -> None:
    book = ledger()
    receipt = book.apply(command(MAXIMAL_FACT), START)
    assert receipt.accepted and book.state.facts[0].recorded_by == LONGEST_ACTOR


@pytest.mark.parametrize(
    "operation",
    [
        RecordFact(statement="s", source="s", confidence=1, run_id="r" * (MAX_NAME_CHARS + 1)),
        RecordEvidence(kind=EvidenceKind.TOOL, summary="s", node_id="n" * (MAX_NAME_CHARS + 1)),
        Submit(summary="s", run_id="r" * (MAX_NAME_CHARS + 1)),
        InvalidateFact(fact_id="f" * (MAX_NAME_CHARS + 1), reason="r"),
    ],
)
def test_a_name_too_long_in_a_task_command_is_refused(operation: TaskOperation) -> None:
    problem = ledger().check(command(operation, "system:harness"))
    assert problem is not None and f"at most {MAX_NAME_CHARS:,} characters" in problem


def test_a_graph_knows_its_size_and_a_full_scope_refuses_new_tasks() -> None:
    graph = TaskGraph(TaskGraphState(scope="s"))
    at = START
    made = 0
    while True:
        create = CreateTask(
            title=TEXT, depends_on=[f"task-{d}" for d in range(1, min(made, 100) + 1)]
        )
        receipt = graph.apply(
            GraphCommand(
                scope="s",
                actor=LONGEST_ACTOR,
                operation=create,
                idempotency_key=f"{made}" + "k" * 190,
            ),
            at,
        )
        if not receipt.accepted:
            break
        made += 1
        if made % 7 == 0:
            graph.apply(
                GraphCommand(
                    scope="s",
                    actor=SYSTEM,
                    operation=AddDependency(task_id=f"task-{made}", depends_on="task-1"),
                ),
                at,
            )
            graph.apply(
                GraphCommand(
                    scope="s",
                    actor=SYSTEM,
                    operation=StatusChanged(task_id="task-1", status=TaskStatus.IN_REVIEW),
                ),
                at,
            )
        assert graph.size == json_bytes(graph.state)
    assert receipt.reason.endswith("bytes of tasks): put new tasks in a new scope")
    assert made >= 40
    status = GraphCommand(
        scope="s", actor=SYSTEM, operation=StatusChanged(task_id="task-2", status=TaskStatus.DONE)
    )
    assert graph.check(status) is None  # a task's status still reaches a full graph


def test_rules_know_their_size_and_a_full_scope_refuses_new_lessons() -> None:
    rules = ScopeRules("s", ScopeRulesState(contract=Contract(presets={"refund": Preset()})))
    lesson = ProposeLesson(fact=TEXT, evidence=["e" * 200] * 50, question=TEXT, proposal=TEXT)

    def send(operation: RulesOperation, key: str) -> str:
        receipt = rules.apply(
            RulesCommand(scope="s", actor=LONGEST_ACTOR, operation=operation, idempotency_key=key),
            START,
        )
        assert rules.size == json_bytes(rules.state)
        return receipt.reason

    send(SetContract(contract=Contract(presets={"refund": Preset(), "audit": Preset()})), "c")
    n = 0
    while (reason := send(lesson, f"l{n}")) == "lesson proposed":
        n += 1
        if n % 5 == 0:
            send(ResolveLesson(lesson_id=f"lesson-{n}", accept=True, reason=TEXT), f"r{n}")
            send(
                PromoteLesson(
                    lesson_id=f"lesson-{n}",
                    kind=RuleKind.REQUIRE_ACCEPTANCE_CHECK,
                    target="dispute-checked",
                    preset="refund",
                ),
                f"p{n}",
            )
            send(RevokeRule(rule_id=f"rule-{n // 5}", reason=TEXT), f"v{n}")
    assert "bytes of contract, lessons and rules)" in reason
    assert n >= 20


@pytest.mark.parametrize(
    "problems",
    [
        [],
        ["status is FAILED_EXECUTION, expected SUCCEEDED"],
        ["x" * 10_000],
        ["\x00" * 1_000, "short"],
        [f"no error code E{n} (seen: none)" for n in range(500)],
    ],
)
def test_a_case_result_keeps_its_unmet_expectations_within_their_bound(
    problems: list[str],
) -> None:
    kept = bounded_unmet(problems)
    assert json_bytes(kept) <= MAX_UNMET_BYTES
    assert bool(kept) == bool(problems)  # a failed case always says why
    if json_bytes(problems) <= MAX_UNMET_BYTES - UNMET_TAIL_BYTES:
        assert kept == problems
    else:
        assert kept[-1].startswith("and ") or kept[-1].endswith("...")


def test_a_suite_too_large_to_carry_through_continue_as_new_is_refused_before_it_starts() -> None:
    cases = load_cases([])  # every bundled scenario's cases
    assert suite_problem(EvalRequest(cases=cases, repeat=6), "eval-12345678") is None
    problem = suite_problem(EvalRequest(cases=cases, repeat=MAX_REPEAT), "eval-12345678")
    assert problem is not None
    assert problem.startswith(f"this suite of {len(cases) * MAX_REPEAT:,} case run(s) would")
    assert problem.endswith("split its cases into smaller suites, or repeat them less")


TEXTS = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=SUMMARY_CHARS)
ACTORS = st.sampled_from(["agent:", "human:", "system:"]).flatmap(
    lambda kind: st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=50).map(
        lambda name: kind + name + "x"
    )
)


def operations(facts: int, decisions: int) -> st.SearchStrategy[TaskOperation]:
    """Commands of every kind that grows or changes a ledger, with any text."""
    fact_id = st.integers(1, max(facts, 1)).map(lambda n: f"fact-{n}")
    return st.one_of(
        st.builds(RecordFact, statement=TEXTS, source=TEXTS, confidence=st.floats(0, 1)),
        st.builds(RecordEvidence, kind=st.sampled_from(EvidenceKind), summary=TEXTS),
        st.builds(ProposeDecision, question=TEXTS, proposal=TEXTS),
        st.builds(InvalidateFact, fact_id=fact_id, reason=TEXTS),
        st.builds(
            ResolveDecision,
            decision_id=st.integers(1, max(decisions, 1)).map(lambda n: f"dec-{n}"),
            accept=st.booleans(),
            reason=TEXTS,
        ),
        st.builds(SetStatus, status=st.sampled_from(TaskStatus), reason=TEXTS | st.none()),
    )


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.data())
def test_any_commands_with_any_text_keep_the_size_exact_and_within_the_estimate(
    data: st.DataObject,
) -> None:
    book = ledger()
    for step in range(data.draw(st.integers(1, 25))):
        state = book.state
        operation = data.draw(operations(len(state.facts), len(state.decisions)))
        key = data.draw(TEXTS.map(lambda text: text[:200]) | st.none())
        each = command(operation, data.draw(ACTORS), key)
        before, reckoned = book.size, book.growth(each)
        book.apply(each, START + timedelta(seconds=step))  # accepted or refused
        assert book.size == json_bytes(book.state)
        assert book.size - before <= reckoned


def test_the_legacy_gateway_decides_as_before_0_10_whatever_the_size() -> None:
    """A task's handler re-checks a completion or a system's approval under the gateway its
    history was recorded with: before 0.10 there was no bound on bytes, on an actor's length or
    on names, only a count of records, and a replay must decide as that gateway did."""
    book = ledger()
    book.apply(command(RecordEvidence(kind=EvidenceKind.TEST, summary="passes")), START)
    n = 0
    while book.size <= MAX_LEDGER_BYTES + FINISHING_RESERVE_BYTES:  # as a 0.9 task could grow
        book.apply(command(MAXIMAL_FACT, key=f"fact-{n}"), START, checked=True)
        n += 1
    book.apply(command(Submit(summary="s", evidence_ids=["ev-1"]), "system:h"), START, checked=True)
    long_actor = "system:" + "s" * (2_000 - len("system:"))
    for actor in ("system:harness", long_actor):
        approval = command(ReviewSubmission(submission_id="sub-1", approve=True), actor)
        assert book.check(approval, legacy=True) is None
        assert book.check(approval) is not None
    assert "is full" in (book.check(command(Complete(), "human:ops")) or "")
    long_name = RecordFact(statement="s", source="s", confidence=1, run_id="r" * 2_000)
    assert ledger().check(command(long_name, long_actor), legacy=True) is None
    assert ledger().check(command(long_name, long_actor)) is not None
    counted = ledger()
    for k in range(LEGACY_MAX_RECORDS):
        fact = RecordFact(statement="s", source="s", confidence=1)
        counted.apply(command(fact, "human:ops", key=str(k)), START, checked=True)
    one_more = command(RecordFact(statement="s", source="s", confidence=1), "human:ops")
    assert "is full" in (counted.check(one_more) or "")  # 0.10 counts the bytes instead
    assert f"holds {LEGACY_MAX_RECORDS:,} records" in (counted.check(one_more, legacy=True) or "")
