"""Budget pressure: the highest utilisation across the limited dimensions."""

from __future__ import annotations

import pytest

from harness.budget import Budget, BudgetLimits, Degradation, degradation


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
