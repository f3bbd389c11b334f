"""The run's agent nodes, from the run's side: each one's loop is a child workflow
(`workflows.agent_loop`) that spends an allowance of the run's budget.

The run grants each agent a share of its budget when it starts, and more when the agent asks
(`ask`, a signal from the child, answered by a signal to it) and the run can still afford it
(`harness.engine.agent_grants`). What an agent has spent is charged to the run as it reports it
(with each ask, and at its end), so the run's usage and degradation show its turns and calls.
An agent's model may ask a person (`wait`): the run opens the wait, as every wait is the run's.
Once the run stops or halts, every ask is refused at once, so no loop outlives its run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import BaseModel, JsonValue, ValidationError
from temporalio import workflow
from temporalio.exceptions import (
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    FailureError,
)

from harness.core.errors import ErrorCode, parse_error_code
from harness.engine.agent_allowance import AgentAllowance, turns_allowed
from harness.engine.agent_grants import AgentGrants
from harness.engine.agent_loop import (
    TURNS_PER_RUN,
    AgentLoopRequest,
    AgentLoopResult,
    AgentProgress,
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
from harness.engine.budget import CONSERVE_AT, Budget, BudgetUsage
from harness.engine.contracts import (
    AGENT_ALLOWANCE_ANSWER_SIGNAL,
    AGENT_LOOP_WORKFLOW,
    AGENT_RUNTIME_LOOP_WORKFLOW,
    AGENT_WAIT_ANSWER_SIGNAL,
)
from harness.engine.dag import NodeStatus
from harness.engine.messages import ToolCallResult
from harness.engine.node_ledger import NodeLedger
from harness.engine.run import ExecutionOptions
from harness.engine.sessions import BUILTIN_RUNTIME
from harness.waits.approval_cover import approval_refusal
from harness.waits.wait_book import WaitKind, WaitStatus
from workflows.agent_runtime_loop import AgentRuntimeLoopRequest
from workflows.wait_desk import WaitDesk

SUMMARY_GOAL_CHARS = 80
STOPPED_REASON = "the run stopped"


class AgentNodes:
    """The agent nodes of one plan attempt."""

    def __init__(
        self,
        ledger: NodeLedger,
        budget: Budget,
        options: ExecutionOptions,
        desk: WaitDesk,
        stopping: Callable[[], bool],
    ) -> None:
        self._desk = desk
        self._ledger = ledger
        self._budget = budget
        self._options = options
        self._stopping = stopping
        self._grants = AgentGrants(budget)
        self._children: dict[str, tuple[str, int]] = {}
        """Each running agent's child workflow id and max_turns, by node id."""
        self._traced: dict[str, int] = {}
        """Each running agent's steps already in the run's trace."""

    async def run(self, node_id: str, arguments: dict[str, JsonValue]) -> None:
        """The node's loop as a child workflow, to its result or its failure."""
        ledger = self._ledger
        try:
            agent_arguments = AgentArguments.model_validate(arguments)
        except ValidationError as error:
            message = f"the agent's arguments: {error.errors()[0]['msg']}"
            ledger.fail(node_id, arguments, ErrorCode.INVALID_ARGUMENT, message, attempts=0)
            return
        initial = self._grants.first_grant(node_id, self._sharers())
        if initial is None:  # a limited part of the budget has nothing left to grant
            self._budget_spent(node_id)
            return
        child_id = f"{self._options.run_id}-attempt-{self._options.attempt}-agent-{node_id}"
        self._children[node_id] = (child_id, agent_arguments.max_turns)
        started = workflow.now()
        request = self._request(node_id, agent_arguments, AgentAllowance(limits=initial))
        loop: tuple[str, BaseModel] = (AGENT_LOOP_WORKFLOW, request)
        runtime = self._options.agent_runtime
        if runtime not in (None, BUILTIN_RUNTIME):  # (runs without it: the built-in loop)
            loop = (
                AGENT_RUNTIME_LOOP_WORKFLOW,
                AgentRuntimeLoopRequest(loop=request, runtime=runtime),
            )
        try:
            result: AgentLoopResult = await workflow.execute_child_workflow(
                loop[0],
                loop[1],
                id=child_id,
                result_type=AgentLoopResult,
                static_summary=f"{node_id} agent: {_short(agent_arguments.goal)}",
            )
        except asyncio.CancelledError:
            self._ended(node_id, calls_known=False)
            raise
        except ChildWorkflowError as error:
            if isinstance(error.cause, CancelledError) and self._stopping():
                self._ended(node_id, calls_known=False)
                raise asyncio.CancelledError from error  # the run stopped it: not a failure
            self._failed(node_id, arguments, error)
            return
        if self._stopping():  # it answered before it heard the run stop: the run stops still
            self._settle(node_id, result)
            raise asyncio.CancelledError
        self._settle(node_id, result)
        ledger.complete(
            node_id,
            ToolCallResult(
                result=result.result.model_dump(mode="json"),
                attempt=1,
                latency_ms=(workflow.now() - started).total_seconds() * 1000,
            ),
            # a replan's identical agent node reuses an answer, never a loop cut short
            arguments=arguments if result.result.stopped is AgentStop.ANSWERED else None,
            agent_usage=result.usage,
        )

    def _request(
        self, node_id: str, arguments: AgentArguments, allowance: AgentAllowance
    ) -> AgentLoopRequest:
        options, ledger = self._options, self._ledger
        names = agent_tool_names(arguments.tools, ledger.catalog, bound_to_task=bool(options.task))
        return AgentLoopRequest(
            run_id=options.run_id,
            scenario=options.scenario,
            node_id=node_id,
            plan_attempt=options.attempt,
            arguments=arguments,
            tools=[ledger.specs[name] for name in names],
            allowance=allowance,
            provider=options.provider,
            model=arguments.model or options.agent_model,
            economy=self._economy(),
            approve_side_effects=options.approve_side_effects,
            turns_allowed=turns_allowed(arguments.max_turns, self._budget.degradation()),
            turns_per_run=options.scale.agent_turns_per_run or TURNS_PER_RUN,
            task=options.task,
            faults=options.faults,
        )

    def _failed(
        self, node_id: str, arguments: dict[str, JsonValue], error: ChildWorkflowError
    ) -> None:
        """The loop failed (a FATAL call, a model turn that failed, or its child ended by
        someone else): charge what it says it did, then fail the node with its cause's code."""
        cause = error.cause
        ended = _loop_result(cause)
        if ended is not None:
            self._settle(node_id, ended)
            self._ledger.agent_usage = self._ledger.agent_usage.plus(ended.usage)
        else:
            self._ended(node_id, calls_known=False)
        code = parse_error_code(getattr(cause, "type", None))
        message = cause.message if isinstance(cause, ApplicationError) else str(cause or error)
        self._ledger.fail(node_id, arguments, code, f"the agent's loop ended: {message}", 1)

    def _settle(self, node_id: str, result: AgentLoopResult) -> None:
        """Charge all the loop spent, free what it did not use, and trace the steps the run
        was not told of yet."""
        usage = result.usage
        spent = BudgetUsage(
            tokens=usage.total_tokens, tool_calls=result.tool_calls_made, cost_usd=usage.cost_usd
        )
        self._grants.charge(node_id, spent)
        self._ledger.agent_steps(node_id, result.steps[self._traced.get(node_id, 0) :])
        self._ended(node_id, calls_known=True)

    def progress(self, report: AgentProgress) -> None:
        """A running agent's progress: charge what it spent, trace its new steps."""
        if not self._grants.running(report.node_id):
            return  # it has ended: its result said it all
        self._grants.charge(report.node_id, report.spent)
        self._ledger.agent_steps(report.node_id, report.steps)
        self._traced[report.node_id] = self._traced.get(report.node_id, 0) + len(report.steps)

    def _ended(self, node_id: str, *, calls_known: bool) -> None:
        self._grants.release(node_id, calls_known=calls_known)
        self._children.pop(node_id, None)
        self._traced.pop(node_id, None)
        if any(wait.node_id == node_id for wait in self._desk.book.pending()):
            self._desk.cancel_pending("the agent's loop ended", node_id=node_id)

    def _budget_spent(self, node_id: str) -> None:
        """An agent the run can grant nothing: it ends at once, stopped by the budget."""
        stopped = AgentResult(
            answer=best_answer([], AgentStop.BUDGET, 0), turns=0, stopped=AgentStop.BUDGET
        )
        call = ToolCallResult(result=stopped.model_dump(mode="json"), attempt=1, latency_ms=0.0)
        self._ledger.complete(node_id, call)

    def _sharers(self) -> int:
        """The agents running or ready (this one among them), and one share for other nodes."""
        ledger = self._ledger
        running = ledger.unsettled() + ledger.ready()
        return 1 + sum(1 for node_id in running if ledger.node(node_id).tool == AGENT_TOOL)

    # -- what the agents ask ---------------------------------------------------------------

    async def ask(self, ask: AllowanceAsk) -> None:
        """An agent asks for more: charge what it reports spent, grant what the run can afford
        of what it wants (nothing once the run stops or halts), and answer it."""
        child = self._children.get(ask.node_id)
        if child is None or not self._grants.running(ask.node_id):
            return  # no such agent runs: its loop has ended, and no one waits for an answer
        self._grants.charge(ask.node_id, ask.spent)
        ending = self._stopping() or self._ledger.halted_by is not None
        granted = None if ending else self._grants.more(ask.node_id, ask.wanted)
        answer = AllowanceAnswer(
            ask_id=ask.ask_id,
            granted=granted,
            turns_allowed=0 if ending else turns_allowed(child[1], self._budget.degradation()),
            economy=self._economy(),
        )
        await self._tell(child[0], AGENT_ALLOWANCE_ANSWER_SIGNAL, answer)

    async def wait(self, ask: AgentWaitAsk) -> None:
        """An agent's model called `ask_user` or `request_approval`: the run opens the wait, as
        its own (so `harness waits`, `answer` and `approve` work on it), holds the node on it,
        and tells the agent how it ended. Once the run stops or halts, none is opened."""
        child = self._children.get(ask.node_id)
        if child is None:
            return  # no such agent runs: its loop has ended, and no one waits for an answer
        approval = ask.kind is WaitKind.APPROVAL
        wait_id = f"{'approve' if approval else 'ask'}-{ask.call_id}"
        if self._stopping() or self._ledger.halted_by is not None:
            refused = AgentWaitAnswer(
                ask_id=ask.ask_id,
                wait_id=wait_id,
                status=WaitStatus.CANCELLED,
                refusal=STOPPED_REASON,
            )
            await self._tell(child[0], AGENT_WAIT_ANSWER_SIGNAL, refused)
            return
        timeouts = self._options.wait_timeouts
        self._ledger.hold(ask.node_id, NodeStatus.WAITING)
        wait = self._desk.open(
            wait_id,
            ask.kind,
            ask.prompt,
            timeouts.approval if approval else timeouts.user_input,
            node_id=ask.node_id,
        )
        await self._desk.until_settled(wait)
        if self._stopping():
            return  # closed by the run's stop, which cancels the loop too: nothing to tell it
        if self._ledger.is_unsettled(ask.node_id):
            self._ledger.hold(ask.node_id, NodeStatus.RUNNING)
        answer = AgentWaitAnswer(
            ask_id=ask.ask_id,
            wait_id=wait.id,
            status=wait.status,
            payload=wait.payload,
            refusal=approval_refusal(wait) if approval else None,
        )
        await self._tell(child[0], AGENT_WAIT_ANSWER_SIGNAL, answer)

    async def _tell(self, child_id: str, signal: str, answer: BaseModel) -> None:
        """Signal the agent's loop; one that has ended meanwhile (cancelled with the run) is
        past hearing, which is no failure of the run's."""
        try:
            await workflow.get_external_workflow_handle(child_id).signal(signal, answer)
        except FailureError as error:
            workflow.logger.warning("agent %s not told: %s", child_id, error)

    def _economy(self) -> bool:
        return self._options.economy_under_pressure and self._budget.pressure() >= CONSERVE_AT


def _loop_result(cause: BaseException | None) -> AgentLoopResult | None:
    """What a loop that failed (a FATAL call, a failed turn) had done, as its failure says."""
    if not isinstance(cause, ApplicationError) or not cause.details:
        return None
    try:
        return AgentLoopResult.model_validate(cause.details[0])
    except ValidationError:
        return None


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SUMMARY_GOAL_CHARS else line[: SUMMARY_GOAL_CHARS - 1] + "…"
