"""An agent's allowance: the part of the run's budget the parent grants an agent child.

The budget stays the parent run's: the parent grants each agent child tokens, tool calls and
cost out of what the run has left and has not promised elsewhere (`affordable_grant`), and more
when the child asks and the run can still afford it (`AgentAllowance.with_grant`). The child
spends against its allowance and asks before each model turn and each tool call whether it may
(`turn_refusal`, `reserve_tool_call`): a turn or call that could take it past the allowance is
refused, and the loop stops with `stopped: budget`. Limits and usage are the run budget's own
types, and an allowance's pressure and degradation are measured as the run's are.

Time is not granted: the run's deadline bounds the child as it bounds every node.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from pydantic import BaseModel, Field

from harness.core.usage import TokenUsage
from harness.engine.budget import (
    BudgetLimits,
    BudgetSnapshot,
    BudgetUsage,
    Degradation,
    attempts_to_reserve,
    degradation,
    pressure_of,
)

N = TypeVar("N", int, float)


class AllowanceRefusal(StrEnum):
    """The dimension of the allowance that cannot pay for what was asked."""

    TOKENS = "tokens"
    TOOL_CALLS = "tool_calls"
    COST = "cost"


class AgentAllowance(BaseModel):
    """What the parent granted an agent child (every grant so far added up; a limit left out is
    one the run does not have either) and what the child has spent of it."""

    limits: BudgetLimits
    usage: BudgetUsage = Field(default_factory=BudgetUsage)
    reserved_tool_calls: int = Field(
        default=0, ge=0, description="Attempts reserved by tool calls still running."
    )

    def pressure(self) -> float:
        return pressure_of(self.limits, self.usage)

    def degradation(self) -> Degradation:
        return degradation(self.pressure())

    def turn_refusal(self, tokens: int, cost_usd: float = 0.0) -> AllowanceRefusal | None:
        """Why a model turn that may take up to `tokens` (its prompt and the most it may write)
        and `cost_usd` may not start; none: it may."""
        if _over(self.usage.tokens + tokens, self.limits.max_tokens):
            return AllowanceRefusal.TOKENS
        if _over(self.usage.cost_usd + cost_usd, self.limits.max_cost_usd):
            return AllowanceRefusal.COST
        return None

    def spend_turn(self, usage: TokenUsage) -> AgentAllowance:
        """The allowance after a turn that used `usage` (what it used, whatever was expected)."""
        spent = self.usage.model_copy(
            update={
                "tokens": self.usage.tokens + usage.total_tokens,
                "cost_usd": self.usage.cost_usd + usage.cost_usd,
            }
        )
        return self.model_copy(update={"usage": spent})

    def reserve_tool_call(self, wanted: int) -> tuple[AgentAllowance, int]:
        """Reserve up to `wanted` attempts of one call (its tool's attempts), as the run reserves
        them; the allowance after, and the attempts the call may make (0: the call is refused)."""
        granted = attempts_to_reserve(
            wanted, self.limits.max_tool_calls, self.usage.tool_calls, self.reserved_tool_calls
        )
        reserved = self.reserved_tool_calls + granted
        return self.model_copy(update={"reserved_tool_calls": reserved}), granted

    def settle_tool_call(self, reserved: int, used: int) -> AgentAllowance:
        """A call that reserved `reserved` attempts finished after `used`: charge those, free the
        rest."""
        spent = self.usage.model_copy(update={"tool_calls": self.usage.tool_calls + used})
        return self.model_copy(
            update={"usage": spent, "reserved_tool_calls": self.reserved_tool_calls - reserved}
        )

    def with_grant(self, more: BudgetLimits) -> AgentAllowance:
        """The allowance with `more` granted on top (a dimension without a limit stays so)."""
        limits = BudgetLimits(
            max_tokens=_added(self.limits.max_tokens, more.max_tokens),
            max_tool_calls=_added(self.limits.max_tool_calls, more.max_tool_calls),
            max_cost_usd=_added(self.limits.max_cost_usd, more.max_cost_usd),
        )
        return self.model_copy(update={"limits": limits})

    def unspent(self) -> BudgetUsage:
        """What the parent has promised this child and the child has not spent yet (reserved
        attempts included): what the run may not grant anyone else meanwhile."""
        return BudgetUsage(
            tokens=_left(self.limits.max_tokens, self.usage.tokens),
            tool_calls=_left(self.limits.max_tool_calls, self.usage.tool_calls),
            cost_usd=_left(self.limits.max_cost_usd, self.usage.cost_usd),
        )


def affordable_grant(
    run: BudgetSnapshot, promised: BudgetUsage, wanted: BudgetLimits
) -> BudgetLimits | None:
    """What the run can grant of `wanted` (a limit left out: as much as the run has), from what
    it has left after its own usage and what it `promised` and is not yet spent (other agents'
    unspent allowances, attempts reserved by calls still running). A dimension the run does not
    limit is granted as wanted. None: a dimension the run limits has nothing left to grant."""
    granted: dict[str, float | int | None] = {}
    for field, used, promised_part in (
        ("max_tokens", run.usage.tokens, promised.tokens),
        ("max_tool_calls", run.usage.tool_calls, promised.tool_calls),
        ("max_cost_usd", run.usage.cost_usd, promised.cost_usd),
    ):
        limit = getattr(run.limits, field)
        asked = getattr(wanted, field)
        if limit is None:
            granted[field] = asked
            continue
        available = limit - used - promised_part
        if available <= 0:
            return None
        granted[field] = available if asked is None else min(asked, available)
    return BudgetLimits.model_validate(granted)


def turns_allowed(max_turns: int, level: Degradation) -> int:
    """The turns an agent loop may take at the run's degradation `level`: all of them while the
    run is at ease, half when it conserves, one last turn to answer from what it has when only
    the minimum is affordable, none when the budget is spent."""
    if level is Degradation.FULL:
        return max_turns
    if level is Degradation.CONSERVE:
        return max(1, max_turns // 2)
    if level is Degradation.MINIMAL:
        return min(1, max_turns)
    return 0


def _over(total: float, limit: float | None) -> bool:
    return limit is not None and total > limit


def _added(limit: N | None, more: N | None) -> N | None:
    if limit is None:
        return None
    return limit if more is None else limit + more


def _left(limit: N | None, used: N) -> N:
    if limit is None or limit <= used:
        return type(used)(0)
    return limit - used
