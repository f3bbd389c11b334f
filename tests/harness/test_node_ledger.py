"""NodeLedger: one call per change of a node's state, and that call also charges and traces it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from pydantic import JsonValue

from harness.core.errors import ErrorCode
from harness.core.plan import PlanNode
from harness.core.usage import TokenUsage
from harness.engine.budget import Budget, BudgetLimits
from harness.engine.dag import NodeStatus
from harness.engine.messages import AttemptTiming
from harness.engine.node_ledger import REUSED_MESSAGE, NodeLedger
from harness.engine.reuse import call_key
from harness.engine.run import NodeOutcome, RunCounts
from harness.engine.trace import TraceKind, TraceLog
from tests.factories import (
    START,
    collect,
    delay,
    node,
    synthetic_catalog,
    synthetic_plan,
    tool_call,
)

USAGE = TokenUsage(input_tokens=120, output_tokens=30, cost_usd=0.02)


class FakeClock:
    """The run's notion of now, moved on by hand."""

    def __init__(self) -> None:
        self.at = START

    def now(self) -> datetime:
        return self.at

    def advance(self, ms: float) -> None:
        self.at += timedelta(milliseconds=ms)


@dataclass
class Rig:
    ledger: NodeLedger
    budget: Budget
    trace: TraceLog
    clock: FakeClock

    def events(self) -> list[tuple[TraceKind, str | None]]:
        return [(event.kind, event.node_id) for event in self.trace.events]


def rig(*nodes: PlanNode) -> Rig:
    """A ledger over `nodes` with the synthetic catalog, an unlimited budget and a fake clock."""
    clock = FakeClock()
    budget = Budget(BudgetLimits())
    trace = TraceLog("run-1", None, budget, clock.now)
    ledger = NodeLedger(synthetic_plan(*nodes), synthetic_catalog(), budget, trace, clock.now)
    return Rig(ledger, budget, trace, clock)


def fan_in() -> Rig:
    """a -> (b, c) -> final."""
    return rig(
        delay("a", 10),
        delay("b", 10, deps=["a"]),
        delay("c", 10, deps=["a"]),
        collect("final", ["b", "c"]),
    )


# --- completion -----------------------------------------------------------------------------


def test_completing_a_node_makes_its_dependents_ready() -> None:
    run = fan_in()

    assert run.ledger.admit_next() == "a"
    assert run.ledger.ready() == []
    run.ledger.complete("a", tool_call({"value": "a"}))

    assert run.ledger.status("a") is NodeStatus.DONE
    assert run.ledger.ready() == ["b", "c"]
    assert run.ledger.results == {"a": {"value": "a"}}


def test_completion_is_traced_with_the_latency_the_clock_saw() -> None:
    run = fan_in()
    run.ledger.admit("a")
    run.clock.advance(250)

    run.ledger.complete("a", tool_call("a", attempt=2, latency_ms=12.34567))

    outcome = run.ledger.outcomes["a"]
    assert (outcome.started_at, outcome.finished_at) == (START, run.clock.at)
    assert outcome.latency_ms == 250.0
    assert outcome.tool_latency_ms == 12.346
    assert outcome.attempts == 2
    finish = run.trace.events[-1]
    assert (finish.kind, finish.node_id, finish.tool, finish.role, finish.tool_role) == (
        TraceKind.NODE_FINISH,
        "a",
        "delay",
        "worker",
        "DATA",
    )
    assert (finish.status, finish.latency_ms, finish.at) == ("DONE", 250.0, run.clock.at)
    assert finish.data == {"attempts": 2, "reused": False}


def test_a_fresh_completion_charges_its_tokens_to_the_budget_and_the_trace() -> None:
    run = fan_in()
    run.ledger.admit("a")

    run.ledger.complete("a", tool_call("a", usage=USAGE))

    assert run.budget.usage.tokens == 150
    assert run.budget.usage.cost_usd == pytest.approx(0.02)
    assert run.ledger.usage == USAGE
    assert run.ledger.outcomes["a"].usage == USAGE
    assert (run.trace.events[-1].tokens, run.trace.events[-1].cost_usd) == (150, 0.02)


def test_a_reused_completion_charges_no_tokens() -> None:
    run = fan_in()
    run.ledger.admit("a")

    run.ledger.complete("a", tool_call("a", attempt=3, usage=USAGE), reused=True)

    outcome = run.ledger.outcomes["a"]
    assert (outcome.status, outcome.reused, outcome.attempts) == (NodeStatus.DONE, True, 0)
    assert outcome.usage is None
    assert run.budget.usage.tokens == 0
    assert run.ledger.usage == TokenUsage()
    finish = run.trace.events[-1]
    assert (finish.tokens, finish.message) == (None, REUSED_MESSAGE)
    assert finish.data == {"attempts": 0, "reused": True}


def test_a_completion_with_its_arguments_is_kept_for_reuse_by_later_attempts() -> None:
    run = rig(delay("a", 10), delay("b", 10))
    arguments: dict[str, JsonValue] = {"ms": 10, "value": "a"}
    call = tool_call({"value": "a"})
    run.ledger.admit("a")
    run.ledger.admit("b")

    run.ledger.complete("a", call, arguments=arguments)
    run.ledger.complete("b", tool_call({"value": "b"}))

    assert run.ledger.fresh_results == {call_key("delay", arguments): call}


# --- failure --------------------------------------------------------------------------------


def chain_and_a_bystander() -> Rig:
    """a -> b -> c, and d on its own."""
    return rig(
        delay("a", 10),
        delay("b", 10, deps=["a"]),
        delay("c", 10, deps=["b"]),
        delay("d", 10),
    )


def test_a_failure_skips_every_transitive_dependent_with_the_reason() -> None:
    run = chain_and_a_bystander()
    run.ledger.admit("a")
    run.clock.advance(40)

    run.ledger.fail("a", {"ms": -1}, ErrorCode.INVALID_ARGUMENT, "ms must be >= 0", attempts=1)

    assert run.ledger.statuses() == {
        "a": NodeStatus.FAILED,
        "b": NodeStatus.SKIPPED,
        "c": NodeStatus.SKIPPED,
        "d": NodeStatus.PENDING,
    }
    assert run.ledger.outcomes["b"].error_message == "dependency 'a' failed"
    assert run.ledger.outcomes["c"].error_message == "dependency 'a' failed"
    failed = run.ledger.outcomes["a"]
    assert (failed.error_code, failed.latency_ms) == ("INVALID_ARGUMENT", 40.0)
    assert run.ledger.ready() == ["d"]


def test_a_failure_is_traced_before_the_skips_it_causes() -> None:
    run = chain_and_a_bystander()
    run.ledger.admit("a")

    run.ledger.fail("a", {"ms": -1}, ErrorCode.INVALID_ARGUMENT, "ms must be >= 0", attempts=1)

    assert run.events() == [
        (TraceKind.NODE_FAIL, "a"),
        (TraceKind.NODE_SKIP, "b"),
        (TraceKind.NODE_SKIP, "c"),
    ]
    fail = run.trace.events[0]
    assert fail.message == "INVALID_ARGUMENT: ms must be >= 0"
    assert fail.data == {"attempts": 1, "error_code": "INVALID_ARGUMENT"}


def test_a_failure_is_kept_for_the_next_plan_with_its_arguments() -> None:
    run = chain_and_a_bystander()
    run.ledger.admit("a")

    run.ledger.fail("a", {"ms": -1}, ErrorCode.INVALID_ARGUMENT, "ms must be >= 0", attempts=1)

    (failure,) = run.ledger.failures
    assert (failure.node_id, failure.tool, failure.arguments) == ("a", "delay", {"ms": -1})
    assert (failure.code, failure.message) == ("INVALID_ARGUMENT", "ms must be >= 0")


def test_the_first_fatal_failure_halts_the_run() -> None:
    run = chain_and_a_bystander()
    run.ledger.admit("a")
    run.ledger.admit("d")

    run.ledger.fail("d", {}, ErrorCode.TOOL_EXECUTION_FAILED, "boom", attempts=1)
    run.ledger.fail("a", {}, ErrorCode.AUTH_FAILED, "no key", attempts=1)

    assert run.ledger.halted_by == "node 'd' failed with TOOL_EXECUTION_FAILED"


@pytest.mark.parametrize(
    "code", [ErrorCode.INVALID_ARGUMENT, ErrorCode.MISSING_INFO, ErrorCode.TIMEOUT]
)
def test_a_failure_that_is_not_fatal_does_not_halt_the_run(code: ErrorCode) -> None:
    run = chain_and_a_bystander()
    run.ledger.admit("a")

    run.ledger.fail("a", {}, code, "try another plan", attempts=1)

    assert run.ledger.halted_by is None


# --- retries, holds, skips ------------------------------------------------------------------


def test_each_retry_is_charged_and_traced_when_its_attempt_started() -> None:
    run = fan_in()
    run.ledger.admit("a")
    run.ledger.call_started("a")
    run.clock.advance(5000)
    started = {2: START + timedelta(seconds=1), 3: START + timedelta(seconds=3)}

    run.ledger.retried("a", 3, started)

    assert run.budget.usage.tool_calls == 2
    retries = [event for event in run.trace.events if event.kind is TraceKind.NODE_RETRY]
    assert [event.data for event in retries] == [{"attempt": 2}, {"attempt": 3}]
    assert [event.message for event in retries] == ["attempt 2", "attempt 3"]
    assert [event.at for event in retries] == [started[2], started[3]]


def test_a_retry_whose_start_was_not_reported_is_stamped_now_and_says_so() -> None:
    run = fan_in()
    run.ledger.admit("a")
    run.clock.advance(5000)

    run.ledger.retried("a", 2)

    (retry,) = run.trace.events
    assert (retry.at, retry.message) == (run.clock.at, "attempt 2 (start not reported)")


def test_a_completion_the_activity_timed_is_traced_at_its_own_end_with_its_own_latency() -> None:
    run = rig(delay("a", 10), delay("b", 10), collect("final", ["a", "b"]))
    run.ledger.admit("a")
    run.ledger.call_started("a")
    run.ledger.admit("b")
    run.clock.advance(300)
    run.ledger.call_started("b")
    timing = AttemptTiming(
        started_at=START + timedelta(milliseconds=20),
        finished_at=START + timedelta(milliseconds=102),
    )

    run.ledger.complete("a", tool_call("a", latency_ms=82.0).model_copy(update={"timing": timing}))

    assert [(event.kind, event.node_id) for event in run.trace.events] == [
        (TraceKind.NODE_START, "a"),
        (TraceKind.NODE_FINISH, "a"),
        (TraceKind.NODE_START, "b"),
    ]
    finish = run.trace.events[1]
    assert (finish.at, finish.latency_ms) == (timing.finished_at, 82.0)
    assert finish.data["scheduled_ms"] == 300.0
    assert run.ledger.outcomes["a"].latency_ms == 300.0


def test_a_failure_the_activity_timed_is_traced_at_its_own_end() -> None:
    run = fan_in()
    run.ledger.admit("a")
    run.clock.advance(400)
    timing = AttemptTiming(
        started_at=START + timedelta(milliseconds=100),
        finished_at=START + timedelta(milliseconds=140),
    )

    run.ledger.fail("a", {}, ErrorCode.INVALID_ARGUMENT, "bad", attempts=1, timing=timing)

    failed = next(event for event in run.trace.events if event.kind is TraceKind.NODE_FAIL)
    assert (failed.at, failed.latency_ms) == (timing.finished_at, 40.0)
    assert run.ledger.outcomes["a"].tool_latency_ms == 40.0


def test_a_node_that_succeeded_at_once_has_no_retries() -> None:
    run = fan_in()
    run.ledger.admit("a")

    run.ledger.retried("a", 1)

    assert run.budget.usage.tool_calls == 0
    assert run.trace.events == []


def test_a_held_node_shows_waiting_while_it_still_counts_as_unsettled() -> None:
    run = rig(node("change", "side_effect", target="prod"), delay("other", 10))
    run.ledger.admit("change")

    run.ledger.hold("change", NodeStatus.WAITING, note="approve change?")

    assert run.ledger.status("change") is NodeStatus.WAITING
    assert run.ledger.statuses()["change"] is NodeStatus.WAITING
    assert run.ledger.outcomes["change"].error_message == "approve change?"
    assert run.ledger.unsettled() == ["change"]
    assert run.ledger.is_unsettled("change")
    assert run.ledger.held() == ["change"]
    assert not run.ledger.is_finished()


def test_a_node_taken_back_from_its_wait_is_running_and_no_longer_held() -> None:
    run = rig(node("change", "side_effect", target="prod"))
    run.ledger.admit("change")
    run.ledger.hold("change", NodeStatus.WAITING)

    run.ledger.hold("change", NodeStatus.RUNNING)

    assert run.ledger.status("change") is NodeStatus.RUNNING
    assert run.ledger.held() == []
    assert run.ledger.unsettled() == ["change"]


@pytest.mark.parametrize(("budget", "budget_skips"), [(True, 3), (False, 0)])
def test_skipping_the_ready_nodes_skips_their_dependents_and_counts_budget_skips(
    budget: bool, budget_skips: int
) -> None:
    run = rig(delay("a", 10), delay("b", 10), delay("after_a", 10, deps=["a"]))

    run.ledger.skip_ready("budget exhausted", budget=budget)

    assert set(run.ledger.statuses().values()) == {NodeStatus.SKIPPED}
    assert run.ledger.outcomes["after_a"].error_message == "budget exhausted"
    assert run.ledger.budget_skips == budget_skips
    assert run.ledger.is_finished()


def test_a_cancelled_node_is_skipped_with_its_dependents() -> None:
    run = fan_in()
    run.ledger.admit("a")
    run.clock.advance(5)

    run.ledger.cancel("a", "run cancelled: by user", budget=False)

    assert set(run.ledger.statuses().values()) == {NodeStatus.SKIPPED}
    assert run.ledger.outcomes["a"].latency_ms == 5.0
    assert run.ledger.unsettled() == []
    assert [kind for kind, _ in run.events()] == [TraceKind.NODE_SKIP] * 4


# --- reads ----------------------------------------------------------------------------------


def test_each_node_has_the_role_of_its_tool() -> None:
    run = rig(delay("a", 10), collect("final", ["a"]), node("odd", "not_a_tool"))

    roles = {node_id: outcome.tool_role for node_id, outcome in run.ledger.outcomes.items()}

    assert roles == {"a": "DATA", "final": "FINAL_SYNTHESIS", "odd": "UNKNOWN"}


def test_a_node_outcome_recorded_before_the_rename_reads_its_role_as_the_tool_role() -> None:
    old = NodeOutcome.model_validate({"id": "a", "tool": "delay", "role": "DATA"})

    assert old.tool_role == "DATA"


def test_counts_sum_the_settled_nodes_and_the_charged_tool_calls() -> None:
    run = chain_and_a_bystander()
    run.ledger.admit("a")
    run.ledger.charge_call()
    run.ledger.fail("a", {}, ErrorCode.INVALID_ARGUMENT, "bad", attempts=1)
    run.ledger.admit("d")
    run.ledger.charge_call()
    run.ledger.retried("d", 2)
    run.ledger.complete("d", tool_call("d"))

    assert run.ledger.counts(replans=1) == RunCounts(
        nodes=4, done=1, failed=1, skipped=2, tool_calls=3, replans=1
    )
    assert run.ledger.is_finished()


# --- reserved attempts -----------------------------------------------------------------------


def limited(max_tool_calls: int, *nodes: PlanNode) -> Rig:
    """A ledger over `nodes` whose budget allows `max_tool_calls`."""
    clock = FakeClock()
    budget = Budget(BudgetLimits(max_tool_calls=max_tool_calls))
    trace = TraceLog("run-1", None, budget, clock.now)
    ledger = NodeLedger(synthetic_plan(*nodes), synthetic_catalog(), budget, trace, clock.now)
    return Rig(ledger, budget, trace, clock)


def test_a_reserved_call_is_charged_the_attempts_it_made_and_gives_back_the_rest() -> None:
    run = limited(6, delay("a", 10), delay("b", 10))
    run.ledger.admit("a")
    run.ledger.admit("b")

    assert (run.ledger.reserve_call("a"), run.ledger.reserve_call("b")) == (3, 3)
    run.ledger.retried("a", 2)
    run.ledger.complete("a", tool_call("a", attempt=2))

    assert run.budget.usage.tool_calls == 2
    assert (run.budget.reserved_tool_calls, run.ledger.reserved_attempts("a")) == (3, None)
    retries = [e for e in run.trace.events if e.kind is TraceKind.NODE_RETRY]
    assert [e.data for e in retries] == [{"attempt": 2}]


def test_a_call_reserves_what_the_budget_has_left_when_that_is_less_than_its_tools() -> None:
    run = limited(4, node("f", "flaky", ms=1, value="f"), delay("b", 10))
    run.ledger.admit("f")
    run.ledger.admit("b")

    assert run.ledger.reserve_call("f") == 4  # flaky wants 5
    assert run.ledger.reserve_call("b") == 0


def test_a_side_effect_that_is_not_idempotent_reserves_one_attempt() -> None:
    run = limited(6, node("s", "side_effect", target="prod"))
    run.ledger.admit("s")

    assert run.ledger.reserve_call("s") == 1


@pytest.mark.parametrize("ending", ["fail", "cancel"])
def test_a_reserved_call_that_never_ran_counts_once(ending: str) -> None:
    run = limited(6, delay("a", 10))
    run.ledger.admit("a")
    run.ledger.reserve_call("a")

    if ending == "fail":
        run.ledger.fail("a", {}, ErrorCode.POLICY_VIOLATION, "approval refused", attempts=0)
    else:
        run.ledger.cancel("a", "cancelled", budget=False)

    assert (run.budget.usage.tool_calls, run.budget.reserved_tool_calls) == (1, 0)


def test_a_call_charged_at_admission_is_charged_each_retry_after_it_ran() -> None:
    """Runs before 0.10 reserved nothing: their replay charges as they did."""
    run = limited(6, delay("a", 10))
    run.ledger.admit("a")
    run.ledger.charge_call()

    run.ledger.retried("a", 3)
    run.ledger.fail("a", {}, ErrorCode.RATE_LIMITED, "slow down", attempts=3)

    assert run.budget.usage.tool_calls == 3
