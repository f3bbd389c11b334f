"""The run's grants to its agents: a share of what is left and not promised, more of only what
is asked for, spending charged as reported, and what an agent reserved freed or, when what it
made is unknown, counted as made."""

from __future__ import annotations

from harness.engine.agent_grants import AgentGrants
from harness.engine.budget import Budget, BudgetLimits, BudgetUsage


def test_a_starting_agent_gets_its_share_of_what_is_left_and_unlimited_parts_stay_unlimited() -> (
    None
):
    budget = Budget(BudgetLimits(max_tokens=9_000, max_tool_calls=9))
    grants = AgentGrants(budget)

    first = grants.first_grant("a", sharers=3)

    assert first == BudgetLimits(max_tokens=3_000, max_tool_calls=3)
    assert budget.reserved_tool_calls == 3  # no other node can take them meanwhile
    second = grants.first_grant("b", sharers=2)  # a's promise is not given again
    assert second == BudgetLimits(max_tokens=3_000, max_tool_calls=3)


def test_a_run_with_nothing_left_of_a_limited_part_grants_nothing() -> None:
    budget = Budget(BudgetLimits(max_tool_calls=2))
    budget.settle_tool_calls(0, 2)  # two calls made
    assert AgentGrants(budget).first_grant("a", sharers=1) is None


def test_more_weighs_only_what_is_asked_for() -> None:
    budget = Budget(BudgetLimits(max_tokens=10_000, max_tool_calls=2))
    grants = AgentGrants(budget)
    assert grants.first_grant("a", sharers=2) == BudgetLimits(max_tokens=5_000, max_tool_calls=1)
    budget.reserve_tool_calls(1)  # another node holds the last call

    # no call is left to give, yet an agent that has the calls it needs may get tokens
    assert grants.more("a", BudgetLimits(max_tokens=1_000)) == BudgetLimits(max_tokens=1_000)
    assert grants.more("a", BudgetLimits(max_tool_calls=1)) is None
    assert grants.more("a", BudgetLimits(max_tokens=9_000)) == BudgetLimits(max_tokens=4_000)
    assert grants.more("nobody", BudgetLimits(max_tokens=1)) is None


def test_spending_is_charged_once_and_calls_move_from_reserved_to_made() -> None:
    budget = Budget(BudgetLimits(max_tool_calls=5))
    grants = AgentGrants(budget)
    grants.first_grant("a", sharers=1)

    grants.charge("a", BudgetUsage(tokens=100, tool_calls=2))
    grants.charge("a", BudgetUsage(tokens=150, tool_calls=2))  # reported again, with more

    assert budget.usage.tokens == 150 and budget.usage.tool_calls == 2
    assert budget.reserved_tool_calls == 3
    grants.release("a")
    assert budget.reserved_tool_calls == 0 and budget.usage.tool_calls == 2


def test_an_agent_whose_calls_are_unknown_is_charged_every_call_it_reserved() -> None:
    budget = Budget(BudgetLimits(max_tool_calls=4))
    grants = AgentGrants(budget)
    grants.first_grant("a", sharers=2)  # 2 reserved

    grants.release("a", calls_known=False)

    assert budget.reserved_tool_calls == 0 and budget.usage.tool_calls == 2
