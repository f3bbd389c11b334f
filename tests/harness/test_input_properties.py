"""No input can make a validator raise: generated extreme values (ints past float's range,
negative numbers, NaN and infinity, deep nesting, long strings, wrong types) are thrown at every
model a workflow takes as input, signal or update. Each one either fails to decode (the
converter's ValidationError: a refused update, a refused signal, a run that fails with the
reason) or reaches its pure check, which answers with its own refusal and never raises. What a
check lets through is then applied, which must not raise either: in workflow code a raise fails
the workflow task, and it fails again on every retry.

Fixed seed and a bounded number of examples (the `ci` profile in tests/conftest.py)."""

from __future__ import annotations

import base64
from typing import Any, TypeVar

from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, JsonValue, ValidationError

from harness.engine.bounds import delivery_problems, request_problems
from harness.engine.budget import Budget
from harness.engine.run import RunPhase, RunRequest
from harness.evals.eval_report import EvalRequest
from harness.evals.eval_scoring import CaseObservation, unmet
from harness.governance.scope_rules import RulesCommand, ScopeRules, ScopeRulesState
from harness.governance.task_commands import TaskCommand
from harness.governance.task_graph import GraphCommand, GraphTask, TaskGraph, TaskGraphState
from harness.governance.task_ledger import TaskLedger, TaskLedgerState
from harness.governance.work import TaskRecord, TaskStatus
from harness.waits.deliveries import AnswerRequest, ApprovalRequest, CancelRequest, DeliverRequest
from harness.waits.signatures import signature_problem
from harness.waits.wait_book import WaitKind
from tests.factories import START, wait, wait_book

HUGE_INTS = [10**400, -(10**400), 10**4000, 2**63, -(2**63) - 1, -1, 0]
"""10**400: a JSON number pydantic takes as an int, which `float()` refuses (OverflowError).
10**4000: near the 4,300 digits Python turns into a string at most."""

huge_ints = st.sampled_from(HUGE_INTS)
numbers = st.one_of(
    huge_ints,
    huge_ints,
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
)
long_texts = st.builds(
    lambda char, count: char * count,
    st.characters(codec="utf-8", exclude_categories=["Cs"]),
    st.sampled_from([0, 1, 201, 1_001, 10_001, 300_000]),
)


def _nested(depth: int, leaf: JsonValue) -> JsonValue:
    value: JsonValue = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


deep_values = st.builds(_nested, st.sampled_from([50, 1_000, 5_000]), st.sampled_from([1, "x"]))
wrong_types = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
extremes: st.SearchStrategy[Any] = st.one_of(numbers, long_texts, deep_values, wrong_types)


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every place in a JSON value that a generated value may take."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replaced(value: Any, path: tuple[str | int, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and isinstance(head, str):
        return {**value, head: _replaced(value.get(head), rest, new)}
    if isinstance(value, list) and isinstance(head, int):
        return [_replaced(item, rest, new) if i == head else item for i, item in enumerate(value)]
    return value


def _like(value: Any) -> st.SearchStrategy[Any]:
    """Extreme values, mostly of the kind the place holds (a huge int for a number), so the
    checks behind decoding see them rather than only the decoder. (`one_of` would pick its
    branches evenly, and mostly wrong types; a drawn choice weighs them.)"""
    own: st.SearchStrategy[Any]
    kin: st.SearchStrategy[Any]
    if isinstance(value, int | float) and not isinstance(value, bool):
        own = st.integers(0, 3).flatmap(lambda i: huge_ints if i < 3 else st.integers())
        kin = st.floats(allow_nan=True, allow_infinity=True)
    elif isinstance(value, str):
        own, kin = long_texts, st.text(max_size=5)
    else:
        own, kin = deep_values, st.just(value)
    return st.integers(0, 9).flatmap(lambda i: own if i < 6 else kin if i < 8 else extremes)


@st.composite
def mutated(draw: st.DrawFn, valid: dict[str, Any]) -> Any:
    """A valid payload with one field given an extreme value, sometimes a second one too (more
    would rarely decode, and what does not decode never reaches a check), or the whole."""
    places = _paths(valid)
    payload: Any = valid
    for _ in range(1 + (draw(st.integers(0, 3)) == 0)):
        path = draw(st.sampled_from(places))
        payload = _replaced(payload, path, draw(_like(_at(valid, path))))
    if draw(st.integers(0, 15)) == 7:  # not 0: hypothesis draws its simplest values most
        payload = draw(extremes)
    return payload


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


Model = TypeVar("Model", bound=BaseModel)


def _decoded(model: type[Model], payload: Any) -> Model | None:
    """The model as the converter decodes it, or None where it refuses (which is fine)."""
    try:
        return model.model_validate(payload)
    except ValidationError:
        return None


RUN_REQUEST = {
    "goal": "Compare Paris and Tokyo",
    "limits": {"max_tokens": 1000, "max_tool_calls": 5, "max_seconds": 60.0, "max_cost_usd": 1.0},
    "max_replans": 2,
    "max_concurrency": 4,
    "max_nodes": 10,
    "wait_timeouts": {"approval": 60.0, "user_input": 60.0},
    "actor_keys": {"human:ops": base64.b64encode(b"k" * 32).decode()},
    "memory": {"budget_chars": 4000},
    "scale": {"batch_size": 100},
    "provider": "offline",
    "session_id": "s",
}


@settings(max_examples=300)
@given(mutated(RUN_REQUEST))
@example({**RUN_REQUEST, "max_nodes": 10**400})  # F3: OverflowError in math.isfinite
@example({**RUN_REQUEST, "limits": {"max_tokens": 10**400}})
def test_request_problems_never_raise_and_a_request_in_range_has_a_budget(payload: Any) -> None:
    request = _decoded(RunRequest, payload)
    if request is None:
        return
    problems = request_problems(request)
    assert all(isinstance(problem, str) for problem in problems)
    if not problems:
        budget = Budget(request.limits)
        budget.charge_tokens(10**6, 1.0)
        assert budget.pressure() >= 0
        budget.snapshot()


DELIVERIES: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (ApprovalRequest, {"wait_id": "w", "actor": "human:ops", "comment": "ok", "signature": "s"}),
    (AnswerRequest, {"wait_id": "w", "text": "Paris", "actor": "human:user"}),
    (DeliverRequest, {"operation_id": "op", "data": {"ok": [1, 2]}, "actor": "system:x"}),
    (CancelRequest, {"reason": "r", "actor": "human:ops"}),
]
KEYS = {"human:ops": base64.b64encode(b"k" * 32).decode()}


@given(st.sampled_from(DELIVERIES).flatmap(lambda d: st.tuples(st.just(d[0]), mutated(d[1]))))
def test_delivery_checks_never_raise(case: tuple[type[BaseModel], Any]) -> None:
    model, payload = case
    request = _decoded(model, payload)
    if request is None:
        return
    problems = delivery_problems(request)
    assert all(isinstance(problem, str) for problem in problems)
    book = wait_book(
        wait("w", WaitKind.APPROVAL), wait("a", WaitKind.ASYNC_OPERATION, operation_id="op")
    )
    delivery = None
    if isinstance(request, DeliverRequest):
        delivery = request.delivery(book)
    elif isinstance(request, ApprovalRequest | AnswerRequest):
        delivery = request.delivery()
    if delivery is not None and not problems:  # what the run's handler does with it
        book.deliver(delivery, START)
    problem = signature_problem("run-1", request, WaitKind.APPROVAL, KEYS, lambda *_: False)
    assert problem is None or isinstance(problem, str)


def _ledger() -> TaskLedger:
    task = TaskRecord(
        id="task-1",
        scope="shop",
        title="refund",
        status=TaskStatus.ACTIVE,
        created_by="human:ops",
        created_at=START,
    )
    return TaskLedger(TaskLedgerState(task=task))


def _task_command(operation: dict[str, Any]) -> dict[str, Any]:
    return {"task_id": "task-1", "actor": "agent:p", "operation": operation, "idempotency_key": "k"}


TASK_COMMANDS = [
    _task_command(
        {"op": "record_fact", "statement": "s", "source": "p", "confidence": 0.5, "run_id": "r"}
    ),
    _task_command({"op": "invalidate_fact", "fact_id": "fact-1", "reason": "r"}),
    _task_command({"op": "record_evidence", "kind": "TOOL", "summary": "s", "content_ref": "c"}),
    _task_command({"op": "propose_decision", "question": "q", "proposal": "p"}),
    _task_command({"op": "resolve_decision", "decision_id": "d-1", "accept": True, "reason": "r"}),
    _task_command({"op": "set_status", "status": "BLOCKED", "reason": "r"}),
    _task_command({"op": "bind_run", "run_id": "r"}),
    _task_command({"op": "run_ended", "run_id": "r", "status": "SUCCEEDED"}),
    _task_command({"op": "submit", "summary": "s", "evidence_ids": ["e-1"]}),
    _task_command({"op": "review", "submission_id": "s-1", "approve": True, "comment": "c"}),
    _task_command({"op": "complete", "reason": "r"}),
]


@given(st.sampled_from(TASK_COMMANDS).flatmap(mutated))
def test_the_task_gateway_never_raises_and_applies_what_it_lets_through(payload: Any) -> None:
    command = _decoded(TaskCommand, payload)
    if command is None:
        return
    ledger = _ledger()
    if ledger.check(command) is None:  # a refusal is an answer, never a raise
        ledger.apply(command, START, checked=True)
        ledger.state.model_dump_json()


def _graph() -> TaskGraph:
    task = GraphTask(id="task-1", title="t", created_by="human:ops", created_at=START)
    return TaskGraph(TaskGraphState(scope="shop", tasks={"task-1": task}))


GRAPH_COMMANDS = [
    {
        "scope": "shop",
        "actor": "human:ops",
        "operation": {"op": "create_task", "title": "t", "depends_on": ["task-1"]},
        "idempotency_key": "k",
    },
    {
        "scope": "shop",
        "actor": "human:ops",
        "operation": {"op": "add_dependency", "task_id": "task-1", "depends_on": "task-1"},
    },
    {
        "scope": "shop",
        "actor": "system:harness",
        "operation": {"op": "status_changed", "task_id": "task-1", "status": "DONE"},
    },
]


@given(st.sampled_from(GRAPH_COMMANDS).flatmap(mutated))
def test_the_graph_gateway_never_raises_and_applies_what_it_lets_through(payload: Any) -> None:
    """The task-status signal applies what the check lets through: a raise there is a wedge."""
    command = _decoded(GraphCommand, payload)
    if command is None:
        return
    graph = _graph()
    if graph.check(command) is None:  # the task-status signal calls it too: never a raise
        graph.apply(command, START, checked=True)
        graph.state.model_dump_json()


RULES_COMMANDS = [
    {
        "scope": "shop",
        "actor": "human:ops",
        "operation": {
            "op": "propose_lesson",
            "fact": "f",
            "evidence": ["e"],
            "question": "q",
            "proposal": "p",
        },
    },
    {
        "scope": "shop",
        "actor": "human:ops",
        "operation": {"op": "resolve_lesson", "lesson_id": "l-1", "accept": True, "reason": "r"},
    },
    {
        "scope": "shop",
        "actor": "human:ops",
        "operation": {
            "op": "promote_lesson",
            "lesson_id": "l-1",
            "kind": "REQUIRE_APPROVAL_FOR_TOOL",
            "target": "t",
        },
    },
    {
        "scope": "shop",
        "actor": "human:ops",
        "operation": {"op": "revoke_rule", "rule_id": "rule-1", "reason": "r"},
    },
    {
        "scope": "shop",
        "actor": "human:ops",
        "operation": {"op": "set_contract", "contract": {"requires_approved_review": True}},
    },
]


@given(st.sampled_from(RULES_COMMANDS).flatmap(mutated))
def test_the_rules_gateway_never_raises_and_applies_what_it_lets_through(payload: Any) -> None:
    command = _decoded(RulesCommand, payload)
    if command is None:
        return
    rules = ScopeRules("shop", ScopeRulesState())
    if rules.check(command) is None:
        rules.apply(command, START, checked=True)
        rules.state.model_dump_json()


EVAL_REQUEST = {
    "cases": [
        {
            "id": "a",
            "goal": "Compare Paris and Tokyo",
            "scenario": "cities",
            "options": {"max_replans": 1, "max_concurrency": 2, "limits": {"max_tokens": 100}},
            "expect": {"min_replans": 1, "max_replans": 1, "max_tokens": 10, "max_cost_usd": 1.0},
        }
    ],
    "repeat": 1,
    "concurrency": 2,
}


@given(mutated(EVAL_REQUEST))
@example(_replaced(EVAL_REQUEST, ("cases", 0, "expect"), {"min_replans": 10**400}))
def test_an_eval_suite_checks_its_case_requests_without_raising(payload: Any) -> None:
    request = _decoded(EvalRequest, payload)
    if request is None:
        return
    for case in request.cases:
        request_problems(case.run_request(request.provider))  # both in the suite's workflow
        observed = CaseObservation(status=RunPhase.FAILED_EXECUTION, replans=3, tokens=10**6)
        assert all(isinstance(problem, str) for problem in unmet(case.expect, observed))


def test_every_payload_the_properties_vary_is_valid_to_begin_with() -> None:
    """Otherwise a property would only ever see the decoder refuse, and could not fail."""
    models: list[tuple[type[BaseModel], dict[str, Any]]] = [
        (RunRequest, RUN_REQUEST),
        (EvalRequest, EVAL_REQUEST),
        *DELIVERIES,
        *((TaskCommand, payload) for payload in TASK_COMMANDS),
        *((GraphCommand, payload) for payload in GRAPH_COMMANDS),
        *((RulesCommand, payload) for payload in RULES_COMMANDS),
    ]
    for model, payload in models:
        assert _decoded(model, payload) is not None, model.__name__
