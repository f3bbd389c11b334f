"""An agent's allowance: what the run grants an agent child, what the child spends of it, and
the refusals that keep the child from ever spending past it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.usage import TokenUsage
from harness.engine.agent_allowance import (
    AgentAllowance,
    AllowanceRefusal,
    affordable_grant,
    turns_allowed,
)
from harness.engine.budget import (
    Budget,
    BudgetLimits,
    BudgetSnapshot,
    BudgetUsage,
    Degradation,
    pressure_of,
)


def allowance(
    tokens: int | None = None, tool_calls: int | None = None, cost_usd: float | None = None
) -> AgentAllowance:
    return AgentAllowance(
        limits=BudgetLimits(max_tokens=tokens, max_tool_calls=tool_calls, max_cost_usd=cost_usd)
    )


def run_budget(limits: BudgetLimits, **usage: float) -> BudgetSnapshot:
    spent = BudgetUsage.model_validate(usage)
    return BudgetSnapshot(limits=limits, usage=spent, pressure=pressure_of(limits, spent))


def turn(input_tokens: int, output_tokens: int, cost_usd: float = 0.0) -> TokenUsage:
    return TokenUsage(input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost_usd)


def one_call(spent: AgentAllowance) -> AgentAllowance:
    """The allowance after one call of one attempt, reserved and settled."""
    reserved, attempts = spent.reserve_tool_call(1)
    assert attempts == 1
    return reserved.settle_tool_call(reserved=attempts, used=1)


# --- turns -------------------------------------------------------------------------------------


def test_a_turn_that_could_take_the_allowance_past_its_tokens_is_refused() -> None:
    spent = allowance(tokens=1000).spend_turn(turn(600, 100))

    assert spent.turn_refusal(tokens=301) is AllowanceRefusal.TOKENS


def test_a_turn_that_could_use_the_last_token_exactly_may_start() -> None:
    spent = allowance(tokens=1000).spend_turn(turn(600, 100))

    assert spent.turn_refusal(tokens=300) is None


def test_a_turn_that_could_take_the_allowance_past_its_cost_is_refused() -> None:
    spent = allowance(tokens=10_000, cost_usd=0.10).spend_turn(turn(100, 10, cost_usd=0.08))

    assert spent.turn_refusal(tokens=100, cost_usd=0.03) is AllowanceRefusal.COST


def test_an_allowance_of_a_run_without_limits_refuses_no_turn() -> None:
    spent = allowance().spend_turn(turn(10**9, 10**9, cost_usd=10**6))

    assert spent.turn_refusal(tokens=10**9, cost_usd=10**6) is None
    assert spent.pressure() == 0.0


def test_a_turn_is_charged_what_it_used() -> None:
    spent = allowance(tokens=1000).spend_turn(turn(300, 50, 0.01)).spend_turn(turn(200, 20, 0.02))

    assert spent.usage.tokens == 570
    assert spent.usage.cost_usd == pytest.approx(0.03)
    assert spent.usage.tool_calls == 0


# --- tool calls ----------------------------------------------------------------------------------


def test_a_tool_call_reserves_no_more_attempts_than_are_left() -> None:
    reserved, attempts = allowance(tool_calls=5).reserve_tool_call(3)
    after, more = reserved.reserve_tool_call(3)

    assert (attempts, more) == (3, 2)
    assert after.reserved_tool_calls == 5


def test_a_tool_call_is_refused_when_every_call_is_spent_or_reserved() -> None:
    spent, attempts = allowance(tool_calls=2).reserve_tool_call(1)
    spent = spent.settle_tool_call(reserved=attempts, used=1)
    spent, _ = spent.reserve_tool_call(1)

    assert spent.reserve_tool_call(1)[1] == 0


def test_settling_a_call_charges_the_attempts_it_made_and_frees_the_rest() -> None:
    reserved, attempts = allowance(tool_calls=4).reserve_tool_call(3)

    settled = reserved.settle_tool_call(reserved=attempts, used=1)

    assert settled.usage.tool_calls == 1
    assert settled.reserved_tool_calls == 0
    assert settled.reserve_tool_call(3)[1] == 3


# --- grants --------------------------------------------------------------------------------------


def test_a_grant_of_more_lifts_a_refusal() -> None:
    spent = allowance(tokens=1000, tool_calls=1).spend_turn(turn(900, 100))
    spent = one_call(spent)
    assert spent.turn_refusal(tokens=500) is AllowanceRefusal.TOKENS
    assert spent.reserve_tool_call(1)[1] == 0

    more = spent.with_grant(BudgetLimits(max_tokens=500, max_tool_calls=2))

    assert more.turn_refusal(tokens=500) is None
    assert more.reserve_tool_call(5)[1] == 2
    assert more.usage == spent.usage


def test_a_grant_leaves_a_dimension_without_a_limit_without_one() -> None:
    more = allowance(tokens=100).with_grant(BudgetLimits(max_tokens=50, max_cost_usd=1.0))

    assert more.limits == BudgetLimits(max_tokens=150)


def test_what_is_unspent_is_what_was_granted_less_what_was_spent() -> None:
    spent = allowance(tokens=1000, tool_calls=4, cost_usd=1.0).spend_turn(turn(200, 50, 0.25))
    spent, attempts = spent.reserve_tool_call(3)
    spent = spent.settle_tool_call(reserved=attempts, used=2)

    assert spent.unspent() == BudgetUsage(tokens=750, tool_calls=2, cost_usd=0.75)


def test_the_run_grants_no_more_than_it_has_left_after_its_promises() -> None:
    run = run_budget(BudgetLimits(max_tokens=10_000, max_tool_calls=20), tokens=4000, tool_calls=5)
    promised = BudgetUsage(tokens=3000, tool_calls=10)

    granted = affordable_grant(run, promised, BudgetLimits(max_tokens=5000, max_tool_calls=3))

    assert granted == BudgetLimits(max_tokens=3000, max_tool_calls=3)


def test_the_run_grants_all_it_has_left_when_the_agent_names_no_amount() -> None:
    run = run_budget(BudgetLimits(max_tokens=10_000, max_cost_usd=2.0), tokens=4000, cost_usd=0.5)

    granted = affordable_grant(run, BudgetUsage(), BudgetLimits())

    assert granted == BudgetLimits(max_tokens=6000, max_cost_usd=1.5)


def test_the_run_grants_what_is_wanted_of_what_it_does_not_limit() -> None:
    run = run_budget(BudgetLimits(max_tool_calls=20))

    granted = affordable_grant(run, BudgetUsage(), BudgetLimits(max_tokens=800))

    assert granted == BudgetLimits(max_tokens=800, max_tool_calls=20)


@pytest.mark.parametrize(
    ("usage", "promised"),
    [({"tool_calls": 20}, BudgetUsage()), ({"tool_calls": 15}, BudgetUsage(tool_calls=5))],
)
def test_the_run_grants_nothing_when_a_dimension_it_limits_has_nothing_left(
    usage: dict[str, float], promised: BudgetUsage
) -> None:
    run = run_budget(BudgetLimits(max_tokens=10_000, max_tool_calls=20), **usage)

    assert affordable_grant(run, promised, BudgetLimits(max_tokens=100)) is None


# --- pressure and degradation ------------------------------------------------------------------


def test_an_allowance_is_under_pressure_as_a_run_with_its_limits_would_be() -> None:
    limits = BudgetLimits(max_tokens=1000, max_tool_calls=10, max_cost_usd=1.0)
    run = Budget(limits)
    run.charge_tokens(720, cost_usd=0.5)
    run.charge_tool_call()

    spent = AgentAllowance(limits=limits).spend_turn(turn(700, 20, 0.5))
    spent = one_call(spent)

    assert spent.pressure() == run.pressure() == pytest.approx(0.72)
    assert spent.degradation() is Degradation.CONSERVE


@pytest.mark.parametrize(
    ("level", "max_turns", "turns"),
    [
        (Degradation.FULL, 8, 8),
        (Degradation.CONSERVE, 8, 4),
        (Degradation.CONSERVE, 1, 1),
        (Degradation.MINIMAL, 8, 1),
        (Degradation.EXHAUSTED, 8, 0),
    ],
)
def test_a_degraded_run_gives_its_agents_fewer_turns(
    level: Degradation, max_turns: int, turns: int
) -> None:
    assert turns_allowed(max_turns, level) == turns


# --- properties ----------------------------------------------------------------------------------

steps = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(0, 400), st.integers(0, 400)),
        st.tuples(st.just("start"), st.integers(1, 4), st.integers(0, 4)),
        st.tuples(st.just("finish"), st.just(0), st.just(0)),
    ),
    max_size=30,
)
"""A turn (prompt tokens, tokens written), a call started (attempts wanted, attempts it will
make) or the oldest running call finished: calls asked for in one turn run side by side."""


@settings(max_examples=200, deadline=None)
@given(
    tokens=st.integers(1, 3000), calls=st.integers(1, 12), steps=steps, outputs=st.integers(1, 300)
)
def test_an_agent_that_asks_first_never_spends_past_its_allowance(
    tokens: int, calls: int, steps: list[tuple[str, int, int]], outputs: int
) -> None:
    """Each turn asks for its prompt and the most it may write, and writes no more than that."""
    spent = allowance(tokens=tokens, tool_calls=calls)
    running: list[tuple[int, int]] = []
    for kind, first, second in steps:
        if kind == "turn" and spent.turn_refusal(tokens=first + outputs) is None:
            spent = spent.spend_turn(turn(first, min(second, outputs)))
        elif kind == "start":
            spent, attempts = spent.reserve_tool_call(first)
            if attempts:
                running.append((attempts, min(second, attempts)))
        elif kind == "finish" and running:
            reserved, used = running.pop(0)
            spent = spent.settle_tool_call(reserved=reserved, used=used)
        assert spent.usage.tokens <= tokens
        assert spent.usage.tool_calls + spent.reserved_tool_calls <= calls
        assert spent.pressure() <= 1.0


@settings(max_examples=200, deadline=None)
@given(
    limit=st.integers(1, 5000),
    used=st.integers(0, 5000),
    wanted=st.lists(st.one_of(st.none(), st.integers(1, 3000)), max_size=6),
)
def test_the_runs_grants_never_promise_more_than_it_has(
    limit: int, used: int, wanted: list[int | None]
) -> None:
    run = run_budget(BudgetLimits(max_tokens=limit), tokens=min(used, limit))
    children: list[AgentAllowance] = []
    for amount in wanted:
        promised = BudgetUsage(tokens=sum(child.unspent().tokens for child in children))
        granted = affordable_grant(run, promised, BudgetLimits(max_tokens=amount))
        if granted is not None:
            children.append(AgentAllowance(limits=granted))

    assert run.usage.tokens + sum(child.unspent().tokens for child in children) <= limit
