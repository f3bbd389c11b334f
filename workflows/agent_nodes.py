"""The run's agent nodes, from the run's side: each one's loop is a child workflow
(`workflows.agent_loop`) that spends an allowance of the run's budget.

The run grants each agent, when it starts, a share of what the run has left and has not
promised elsewhere, and more when the agent asks (`ask`, a signal from the child, answered by a
signal to it) and the run can still afford it. Tool calls granted are reserved in the run's own
budget, so no other node can take them meanwhile; tokens and cost granted are promised, so no
other agent is granted them. What an agent has spent is charged to the run as it reports it
(with each ask, and at its end), so the run's usage and degradation show every turn and call.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from pydantic import BaseModel, JsonValue, ValidationError
from temporalio import workflow
from temporalio.exceptions import (
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    FailureError,
)

from harness.core.errors import ErrorCode, parse_error_code
from harness.core.usage import TokenUsage
from harness.engine.agent_allowance import AgentAllowance, affordable_grant, turns_allowed
from harness.engine.agent_loop import (
    TURNS_PER_RUN,
    AgentLoopRequest,
    AgentLoopResult,
    AgentWaitAnswer,
    AgentWaitAsk,
    AllowanceAnswer,
    AllowanceAsk,
    best_answer,
)
from harness.engine.agent_node import (
    AGENT_TOOL,
    AgentArguments,
    AgentResult,
    AgentStop,
    agent_tool_names,
)
from harness.engine.budget import CONSERVE_AT, Budget, BudgetLimits, BudgetUsage
from harness.engine.contracts import (
    AGENT_ALLOWANCE_ANSWER_SIGNAL,
    AGENT_LOOP_WORKFLOW,
    AGENT_WAIT_ANSWER_SIGNAL,
)
from harness.engine.dag import NodeStatus
from harness.engine.messages import ToolCallResult
from harness.engine.node_ledger import NodeLedger
from harness.engine.run import ExecutionOptions
from harness.waits.approval_cover import approval_refusal
from harness.waits.wait_book import WaitKind
from workflows.wait_desk import WaitDesk

SUMMARY_GOAL_CHARS = 80


@dataclass
class _Agent:
    """One running agent: its child's id, what it was granted and what of it is charged."""

    child_id: str
    max_turns: int
    granted: BudgetLimits = field(default_factory=BudgetLimits)
    charged: BudgetUsage = field(default_factory=BudgetUsage)
    reserved_calls: int = 0


class AgentNodes:
    """The agent nodes of one plan attempt."""

    def __init__(
        self, ledger: NodeLedger, budget: Budget, options: ExecutionOptions, desk: WaitDesk
    ) -> None:
        self._desk = desk
        self._ledger = ledger
        self._budget = budget
        self._options = options
        self._agents: dict[str, _Agent] = {}

    async def run(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        """The node's loop as a child workflow, to its result or its failure."""
        ledger = self._ledger
        try:
            agent_arguments = AgentArguments.model_validate(arguments)
        except ValidationError as error:
            message = f"the agent's arguments: {error.errors()[0]['msg']}"
            ledger.fail(node_id, arguments, ErrorCode.INVALID_ARGUMENT, message, attempts=0)
            return
        names = agent_tool_names(
            agent_arguments.tools, ledger.catalog, bound_to_task=self._options.task is not None
        )
        specs = [ledger.specs[name] for name in names]
        child_id = f"{self._options.run_id}-attempt-{self._options.attempt}-agent-{node_id}"
        agent = _Agent(child_id=child_id, max_turns=agent_arguments.max_turns)
        initial = self._grant(agent, self._first_share(), first=True)
        if initial is None:  # a limited part of the budget has nothing left to grant
            self._budget_spent(node_id, agent_arguments)
            return
        agent.granted = initial
        self._agents[node_id] = agent
        request = AgentLoopRequest(
            run_id=self._options.run_id,
            scenario=self._options.scenario,
            node_id=node_id,
            plan_attempt=self._options.attempt,
            arguments=agent_arguments,
            tools=specs,
            allowance=AgentAllowance(limits=initial),
            provider=self._options.provider,
            model=agent_arguments.model or self._options.agent_model,
            economy=self._economy(),
            turns_allowed=turns_allowed(agent_arguments.max_turns, self._budget.degradation()),
            turns_per_run=self._options.scale.agent_turns_per_run or TURNS_PER_RUN,
            task=self._options.task,
            faults=self._options.faults,
        )
        started = workflow.now()
        try:
            result: AgentLoopResult = await workflow.execute_child_workflow(
                AGENT_LOOP_WORKFLOW,
                request,
                id=child_id,
                result_type=AgentLoopResult,
                static_summary=f"{node_id} agent: {_short(agent_arguments.goal)}",
            )
        except asyncio.CancelledError:
            self._release(node_id)
            raise
        except ChildWorkflowError as error:
            if isinstance(error.cause, CancelledError):  # the run stopped it: not a failure
                self._release(node_id)
                raise asyncio.CancelledError from error
            cause = error.cause
            code = parse_error_code(getattr(cause, "type", None))
            ended = _loop_result(cause)
            if ended is not None:  # a call failed FATAL: charge what the loop did, then fail
                self._charge(node_id, ended.usage, ended.tool_calls_made)
                ledger.agent_steps(node_id, ended.steps)
                ledger.agent_usage = ledger.agent_usage.plus(ended.usage)
            self._release(node_id)
            message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
            ledger.fail(node_id, arguments, code, message, 1)
            return
        self._charge(node_id, result.usage, result.tool_calls_made)
        self._release(node_id)
        ledger.agent_steps(node_id, result.steps)
        latency_ms = (workflow.now() - started).total_seconds() * 1000
        ledger.complete(
            node_id,
            ToolCallResult(
                result=result.result.model_dump(mode="json"),
                attempt=1,
                latency_ms=latency_ms,
            ),
            arguments=arguments,  # a replan's identical agent node reuses this answer
            agent_usage=result.usage,
        )

    async def ask(self, ask: AllowanceAsk) -> None:
        """An agent asks for more: charge what it reports spent, grant what the run can afford
        of what it wants, and answer it. An ask for no running agent is ignored."""
        agent = self._agents.get(ask.node_id)
        if agent is None:
            return
        self._charge(ask.node_id, None, ask.spent.tool_calls, spent=ask.spent)
        granted = self._grant(agent, ask.wanted, first=False)
        if granted is not None:
            agent.granted = _added(agent.granted, granted)
        answer = AllowanceAnswer(
            ask_id=ask.ask_id,
            granted=granted,
            turns_allowed=turns_allowed(agent.max_turns, self._budget.degradation()),
            economy=self._economy(),
        )
        await self._tell(agent, AGENT_ALLOWANCE_ANSWER_SIGNAL, answer)

    async def wait(self, ask: AgentWaitAsk) -> None:
        """An agent's model called `ask_user` or `request_approval`: the run opens the wait, as
        its own (so `harness waits`, `answer` and `approve` work on it), holds the node on it,
        and tells the agent how it ended. An ask for no running agent is ignored."""
        agent = self._agents.get(ask.node_id)
        if agent is None:
            return
        timeouts = self._options.wait_timeouts
        approval = ask.kind is WaitKind.APPROVAL
        self._ledger.hold(ask.node_id, NodeStatus.WAITING)
        wait = self._desk.open(
            f"{'approve' if approval else 'ask'}-{ask.call_id}",
            WaitKind.APPROVAL if approval else WaitKind.USER_INPUT,
            ask.prompt,
            timeouts.approval if approval else timeouts.user_input,
            node_id=ask.node_id,
        )
        await self._desk.until_settled(wait)
        if self._ledger.is_unsettled(ask.node_id):
            self._ledger.hold(ask.node_id, NodeStatus.RUNNING)
        answer = AgentWaitAnswer(
            ask_id=ask.ask_id,
            wait_id=wait.id,
            status=wait.status,
            payload=wait.payload,
            refusal=approval_refusal(wait) if approval else None,
        )
        await self._tell(agent, AGENT_WAIT_ANSWER_SIGNAL, answer)

    async def _tell(self, agent: _Agent, signal: str, answer: BaseModel) -> None:
        """Signal the agent's loop; one that has ended meanwhile (cancelled with the run) is
        past hearing, which is no failure of the run's."""
        child = workflow.get_external_workflow_handle(agent.child_id)
        try:
            await child.signal(signal, answer)
        except FailureError as error:
            workflow.logger.warning("agent %s not told: %s", agent.child_id, error)

    # -- the budget ------------------------------------------------------------------------

    def _first_share(self) -> BudgetLimits:
        """What an agent starting now is granted at most: of each limited dimension, what is
        available split between the agents not yet finished and the run's other nodes."""
        ledger = self._ledger
        sharers = 1 + sum(
            1
            for node_id in ledger.unsettled() + ledger.ready()
            if ledger.node(node_id).tool == AGENT_TOOL
        )
        available = self._available()
        limits = self._budget.limits
        return BudgetLimits(
            max_tokens=None if limits.max_tokens is None else max(available.tokens // sharers, 1),
            max_tool_calls=None
            if limits.max_tool_calls is None
            else max(available.tool_calls // sharers, 1),
            max_cost_usd=None
            if limits.max_cost_usd is None
            else max(available.cost_usd / sharers, 1e-6),
        )

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

    def _grant(self, agent: _Agent, wanted: BudgetLimits, *, first: bool) -> BudgetLimits | None:
        """What the run grants of `wanted`, its tool calls reserved; None: nothing is left.
        The `first` grant is the agent's allowance (a dimension left out: unlimited, as the
        run has it); a later one is added to it (a dimension left out: nothing added)."""
        granted = affordable_grant(self._budget.snapshot(), self._promised(), wanted)
        if granted is None:
            return None
        if not first:  # only what was asked for is added
            granted = BudgetLimits(
                max_tokens=granted.max_tokens if wanted.max_tokens else None,
                max_tool_calls=granted.max_tool_calls if wanted.max_tool_calls else None,
                max_cost_usd=granted.max_cost_usd if wanted.max_cost_usd else None,
            )
        calls = granted.max_tool_calls
        if self._budget.limits.max_tool_calls is not None and calls:
            reserved = self._budget.reserve_tool_calls(calls)
            agent.reserved_calls += reserved
            if not reserved:
                return None
            granted = granted.model_copy(update={"max_tool_calls": reserved})
        return granted

    def _budget_spent(self, node_id: str, arguments: AgentArguments) -> None:
        """An agent the run can grant nothing: it ends at once, stopped by the budget."""
        stopped = AgentResult(
            answer=best_answer([], AgentStop.BUDGET, 0), turns=0, stopped=AgentStop.BUDGET
        )
        call = ToolCallResult(result=stopped.model_dump(mode="json"), attempt=1, latency_ms=0.0)
        self._ledger.complete(node_id, call)

    def _charge(
        self,
        node_id: str,
        usage: TokenUsage | None,
        tool_calls: int,
        *,
        spent: BudgetUsage | None = None,
    ) -> None:
        """Charge the run what the agent spent beyond what it was charged already: its tokens
        and cost (from `usage` at its end, or `spent` as it reported it) and its tool calls,
        which move from reserved to made."""
        agent = self._agents[node_id]
        tokens = usage.total_tokens if usage is not None else (spent.tokens if spent else 0)
        cost = usage.cost_usd if usage is not None else (spent.cost_usd if spent else 0.0)
        more_tokens = max(tokens - agent.charged.tokens, 0)
        more_cost = max(cost - agent.charged.cost_usd, 0.0)
        more_calls = max(tool_calls - agent.charged.tool_calls, 0)
        if more_tokens or more_cost:
            self._budget.charge_tokens(more_tokens, more_cost)
        if more_calls:
            settled = min(more_calls, agent.reserved_calls)
            if settled:
                self._budget.settle_tool_calls(settled, settled)
                agent.reserved_calls -= settled
            for _ in range(more_calls - settled):
                self._budget.charge_tool_call()
        agent.charged = BudgetUsage(
            tokens=max(tokens, agent.charged.tokens),
            tool_calls=max(tool_calls, agent.charged.tool_calls),
            cost_usd=max(cost, agent.charged.cost_usd),
        )

    def _release(self, node_id: str) -> None:
        """The agent has ended: the tool calls it reserved and did not make are free again."""
        agent = self._agents.pop(node_id)
        if agent.reserved_calls:
            self._budget.settle_tool_calls(agent.reserved_calls, 0)

    def _economy(self) -> bool:
        return self._options.economy_under_pressure and self._budget.pressure() >= CONSERVE_AT


def _added(limits: BudgetLimits, more: BudgetLimits) -> BudgetLimits:
    return AgentAllowance(limits=limits).with_grant(more).limits


def _loop_result(cause: BaseException | None) -> AgentLoopResult | None:
    """What a loop that failed on a FATAL call had done, as its failure carries it."""
    if not isinstance(cause, ApplicationError) or not cause.details:
        return None
    try:
        return AgentLoopResult.model_validate(cause.details[0])
    except ValidationError:
        return None


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SUMMARY_GOAL_CHARS else line[: SUMMARY_GOAL_CHARS - 1] + "…"
