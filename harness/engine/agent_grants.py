"""The run's side of its agents' allowances: what it granted each running agent, what of that
it has charged, and the tool calls it reserved for each.

The run grants an agent, when it starts, a share of what it has left and has not promised
(`first_grant`), and more when the agent asks (`more`). Tool calls granted are reserved in the
run's own budget, so no other node takes them meanwhile; tokens and cost granted are promised,
so no other agent is granted them. What an agent reports spent is charged (`charge`): its tool
calls move from reserved to made. When it ends, what it reserved and did not make is freed
(`release`); when how many it made is unknown (its loop ended without saying), every call it
reserved is counted as made, so the run's tool-call limit holds whatever happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.engine.agent_allowance import AgentAllowance, affordable_grant
from harness.engine.budget import Budget, BudgetLimits, BudgetSnapshot, BudgetUsage


@dataclass
class _Granted:
    granted: BudgetLimits = field(default_factory=BudgetLimits)
    charged: BudgetUsage = field(default_factory=BudgetUsage)
    reserved_calls: int = 0


class AgentGrants:
    """What the run (its `budget`) has granted its running agents, by node id."""

    def __init__(self, budget: Budget) -> None:
        self._budget = budget
        self._agents: dict[str, _Granted] = {}

    def running(self, node_id: str) -> bool:
        return node_id in self._agents

    def first_grant(self, node_id: str, sharers: int) -> BudgetLimits | None:
        """The allowance of an agent starting now: of each dimension the run limits, what is
        available split between `sharers` (a dimension the run does not limit: unlimited);
        None when a limited dimension has nothing left."""
        available, limits = self._available(), self._budget.limits
        share = BudgetLimits(
            max_tokens=None if limits.max_tokens is None else max(available.tokens // sharers, 1),
            max_tool_calls=None
            if limits.max_tool_calls is None
            else max(available.tool_calls // sharers, 1),
            max_cost_usd=None
            if limits.max_cost_usd is None
            else max(available.cost_usd / sharers, 1e-6),
        )
        agent = _Granted()
        granted = self._granted(agent, share, self._budget.snapshot())
        if granted is not None:
            agent.granted = granted
            self._agents[node_id] = agent
        return granted

    def more(self, node_id: str, wanted: BudgetLimits) -> BudgetLimits | None:
        """What the run adds to the agent's allowance of `wanted` (a dimension left out:
        nothing); None: it has none of a dimension asked for left. Only the dimensions asked
        for are weighed: an agent that has the calls it needs may still get tokens."""
        agent = self._agents.get(node_id)
        if agent is None:
            return None
        snapshot = self._budget.snapshot()
        asked = BudgetLimits(
            max_tokens=snapshot.limits.max_tokens if wanted.max_tokens else None,
            max_tool_calls=snapshot.limits.max_tool_calls if wanted.max_tool_calls else None,
            max_cost_usd=snapshot.limits.max_cost_usd if wanted.max_cost_usd else None,
        )
        granted = self._granted(agent, wanted, snapshot.model_copy(update={"limits": asked}))
        if granted is None:
            return None
        granted = BudgetLimits(
            max_tokens=granted.max_tokens if wanted.max_tokens else None,
            max_tool_calls=granted.max_tool_calls if wanted.max_tool_calls else None,
            max_cost_usd=granted.max_cost_usd if wanted.max_cost_usd else None,
        )
        agent.granted = AgentAllowance(limits=agent.granted).with_grant(granted).limits
        return granted

    def charge(self, node_id: str, spent: BudgetUsage) -> BudgetUsage:
        """Charge what the agent has `spent` in all beyond what was charged before; what was
        charged now (its tokens and cost, and its tool calls, moved from reserved to made)."""
        agent = self._agents[node_id]
        more = BudgetUsage(
            tokens=max(spent.tokens - agent.charged.tokens, 0),
            tool_calls=max(spent.tool_calls - agent.charged.tool_calls, 0),
            cost_usd=max(spent.cost_usd - agent.charged.cost_usd, 0.0),
        )
        if more.tokens or more.cost_usd:
            self._budget.charge_tokens(more.tokens, more.cost_usd)
        settled = min(more.tool_calls, agent.reserved_calls)
        if settled:
            self._budget.settle_tool_calls(settled, settled)
            agent.reserved_calls -= settled
        for _ in range(more.tool_calls - settled):
            self._budget.charge_tool_call()
        agent.charged = BudgetUsage(
            tokens=max(spent.tokens, agent.charged.tokens),
            tool_calls=max(spent.tool_calls, agent.charged.tool_calls),
            cost_usd=max(spent.cost_usd, agent.charged.cost_usd),
        )
        return more

    def release(self, node_id: str, *, calls_known: bool = True) -> None:
        """The agent has ended: what it reserved and did not make is free again; when what it
        made is not known, each call it reserved counts as made."""
        agent = self._agents.pop(node_id, None)
        if agent is not None and agent.reserved_calls:
            used = 0 if calls_known else agent.reserved_calls
            self._budget.settle_tool_calls(agent.reserved_calls, used)

    # -- what the run has to give ----------------------------------------------------------

    def _promised(self) -> BudgetUsage:
        """What running agents were granted and have not spent (as far as they reported), and
        the tool calls every running call has reserved."""
        tokens = cost = 0.0
        for agent in self._agents.values():
            tokens += max((agent.granted.max_tokens or 0) - agent.charged.tokens, 0)
            cost += max((agent.granted.max_cost_usd or 0.0) - agent.charged.cost_usd, 0.0)
        return BudgetUsage(
            tokens=int(tokens), tool_calls=self._budget.reserved_tool_calls, cost_usd=cost
        )

    def _available(self) -> BudgetUsage:
        limits, usage, promised = self._budget.limits, self._budget.usage, self._promised()
        return BudgetUsage(
            tokens=max((limits.max_tokens or 0) - usage.tokens - promised.tokens, 0),
            tool_calls=max(
                (limits.max_tool_calls or 0) - usage.tool_calls - promised.tool_calls, 0
            ),
            cost_usd=max((limits.max_cost_usd or 0.0) - usage.cost_usd - promised.cost_usd, 0.0),
        )

    def _granted(
        self, agent: _Granted, wanted: BudgetLimits, snapshot: BudgetSnapshot
    ) -> BudgetLimits | None:
        """What `snapshot`'s limits can give of `wanted`, the tool calls reserved."""
        granted = affordable_grant(snapshot, self._promised(), wanted)
        if granted is None:
            return None
        calls = granted.max_tool_calls
        if self._budget.limits.max_tool_calls is not None and calls:
            reserved = self._budget.reserve_tool_calls(calls)
            if not reserved:
                return None
            agent.reserved_calls += reserved
            granted = granted.model_copy(update={"max_tool_calls": reserved})
        return granted
