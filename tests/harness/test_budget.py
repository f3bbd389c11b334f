"""Budget pressure: the highest utilisation across the limited dimensions."""

from __future__ import annotations

import pytest

from harness.engine.budget import (
    Budget,
    BudgetLimits,
    Degradation,
    attempts_to_reserve,
    degradation,
)


class _Clock:
    """Elapsed seconds a test sets by hand."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds


def test_pressure_is_zero_without_limits() -> None:
    clock = _Clock()
    budget = Budget(BudgetLimits(), clock)
    budget.charge_tokens(1_000_000, cost_usd=50.0)
    budget.charge_tool_call()
    clock.seconds = 3600

    assert budget.pressure() == 0.0


def test_pressure_is_the_highest_utilisation_over_limited_dimensions() -> None:
    clock = _Clock()
    budget = Budget(BudgetLimits(max_tokens=1000, max_tool_calls=10, max_seconds=100), clock)
    budget.charge_tokens(250)
    for _ in range(5):
        budget.charge_tool_call()
    clock.seconds = 20

    assert budget.pressure() == pytest.approx(0.5)


def test_an_unlimited_dimension_does_not_count_towards_pressure() -> None:
    budget = Budget(BudgetLimits(max_tool_calls=10))
    budget.charge_tokens(10_000_000, cost_usd=1000.0)
    budget.charge_tool_call()

    assert budget.pressure() == pytest.approx(0.1)


def test_pressure_can_exceed_one_when_a_limit_is_overrun() -> None:
    budget = Budget(BudgetLimits(max_cost_usd=0.5))
    budget.charge_tokens(10, cost_usd=0.75)

    assert budget.pressure() == pytest.approx(1.5)


def test_tokens_and_cost_accumulate_and_elapsed_time_is_read_from_the_clock() -> None:
    clock = _Clock()
    budget = Budget(BudgetLimits(max_seconds=10), clock)
    budget.charge_tokens(100, cost_usd=0.01)
    budget.charge_tokens(50, cost_usd=0.02)
    clock.seconds = 4
    clock.seconds = 2

    assert budget.usage.tokens == 150
    assert budget.usage.cost_usd == pytest.approx(0.03)
    assert budget.pressure() == pytest.approx(0.2)


def test_a_snapshot_is_a_rounded_copy_not_a_live_view() -> None:
    budget = Budget(BudgetLimits(max_tool_calls=3))
    budget.charge_tool_call()

    snapshot = budget.snapshot()
    budget.charge_tool_call()

    assert snapshot.pressure == 0.3333
    assert snapshot.usage.tool_calls == 1
    assert budget.usage.tool_calls == 2


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        BudgetLimits(max_tokens=0)


def test_time_passing_raises_pressure_without_anything_being_charged() -> None:
    clock = _Clock()
    budget = Budget(BudgetLimits(max_seconds=10), clock)
    before = budget.pressure()
    clock.seconds = 9.5

    assert before == 0.0
    assert budget.pressure() == pytest.approx(0.95)
    assert budget.seconds_left() == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("pressure", "level"),
    [
        (0.0, Degradation.FULL),
        (0.6999, Degradation.FULL),
        (0.7, Degradation.CONSERVE),
        (0.8999, Degradation.CONSERVE),
        (0.9, Degradation.MINIMAL),
        (0.9999, Degradation.MINIMAL),
        (1.0, Degradation.EXHAUSTED),
        (2.5, Degradation.EXHAUSTED),
    ],
)
def test_degradation_thresholds_are_0_7_0_9_and_1_0(pressure: float, level: Degradation) -> None:
    assert degradation(pressure) is level


# --- tool calls reserve their attempts -------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "limit", "used", "reserved", "granted"),
    [
        (3, None, 100, 50, 3),  # no limit: the tool's own attempts
        (3, 6, 0, 0, 3),
        (3, 6, 0, 3, 3),  # two calls of three fill six
        (3, 6, 0, 6, 0),  # everything reserved: the next call waits
        (3, 6, 4, 0, 2),  # fewer left than the tool wants: what is left
        (3, 6, 1, 3, 2),
        (1, 6, 5, 0, 1),
        (5, 6, 6, 0, 0),  # everything made
        (3, 6, 7, 0, 0),  # overrun (runs charged before 0.10): never negative
        (1, 1, 0, 0, 1),
        (10, 4, 0, 0, 4),
    ],
)
def test_a_call_reserves_the_smaller_of_its_tools_attempts_and_the_calls_left_unreserved(
    wanted: int, limit: int | None, used: int, reserved: int, granted: int
) -> None:
    assert attempts_to_reserve(wanted, limit, used, reserved) == granted


def test_attempts_a_call_did_not_use_are_given_back_and_only_made_ones_are_charged() -> None:
    budget = Budget(BudgetLimits(max_tool_calls=6))

    first, second = budget.reserve_tool_calls(3), budget.reserve_tool_calls(3)
    assert (first, second, budget.can_reserve_tool_call()) == (3, 3, False)
    assert budget.usage.tool_calls == 0 and budget.pressure() == 0.0

    budget.settle_tool_calls(first, used=1)
    assert (budget.usage.tool_calls, budget.reserved_tool_calls) == (1, 3)
    assert budget.reserve_tool_calls(3) == 2  # six, less one made and three reserved

    budget.settle_tool_calls(second, used=3)
    budget.settle_tool_calls(2, used=2)
    assert (budget.usage.tool_calls, budget.reserved_tool_calls) == (6, 0)
    assert budget.pressure() == 1.0
    assert budget.reserve_tool_calls(3) == 0


def test_retried_calls_never_make_more_calls_than_the_limit() -> None:
    """Whatever the order of admissions and finishes, made attempts stay within the limit when
    each call makes at most what it reserved."""
    budget = Budget(BudgetLimits(max_tool_calls=6))
    running: list[int] = []
    for step in range(20):
        granted = budget.reserve_tool_calls(3)
        if granted:
            running.append(granted)
        if running and (not granted or step % 2):
            reserved = running.pop(0)
            budget.settle_tool_calls(reserved, used=reserved)  # every attempt used
        assert budget.usage.tool_calls + budget.reserved_tool_calls <= 6
    assert budget.usage.tool_calls <= 6
