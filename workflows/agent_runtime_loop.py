"""AgentRuntimeLoopWorkflow: an agent node of a run whose `agent_runtime` names a runtime (e.g.
`pydantic-ai`), as a child workflow of its run, in place of the built-in `AgentLoop`.

It drives the runtime as a session does (harness.engine.agent_runtime): `open` with the node's
goal and context, then `run_slice` until the runtime answers or the node's turns are taken. A
slice that ends WAITING (the agent asked a person, or a tool needs approval) asks the run to
open the wait, as the built-in loop does (`workflows.agent_asks`: the run owns every wait), and
gives the runtime how it ended. It returns the `AgentLoopResult` the built-in loop returns, so
the run settles the node as it settles any agent's.

The slices spend the allowance the run granted the node at its start; this loop asks for no more.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from pydantic import BaseModel
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage
from harness.engine.agent_conversation import opening_message
from harness.engine.agent_loop import (
    AgentLoopRequest,
    AgentLoopResult,
    AgentWaitAnswer,
    best_answer,
    bounded_calls,
    wait_outcome,
)
from harness.engine.agent_node import AgentResult, AgentStop, AgentToolCall
from harness.engine.budget import BudgetLimits
from harness.engine.contracts import AGENT_RUNTIME_LOOP_WORKFLOW, AGENT_WAIT_ANSWER_SIGNAL
from harness.engine.sessions import (
    PendingWait,
    SessionStatus,
    SliceLimits,
    SliceRequest,
    SliceResult,
    WaitResult,
)
from workflows.activity_calls.failures import ActivityFailure, raise_if_cancelled
from workflows.activity_calls.steps import PLAN_RETRY
from workflows.agent_asks import RunAsks
from workflows.runtimes import runtime_missing, runtime_named

SLICE_TURNS = 50
"""The most turns one slice takes (SliceLimits' most); a node's turns are its max_turns."""


class AgentRuntimeLoopRequest(BaseModel):
    """The node's loop, as the built-in loop would be given it, and the runtime to run it."""

    loop: AgentLoopRequest
    runtime: str


@workflow.defn(name=AGENT_RUNTIME_LOOP_WORKFLOW)
class AgentRuntimeLoopWorkflow:
    @workflow.init
    def __init__(self, request: AgentRuntimeLoopRequest) -> None:
        self._asks = RunAsks(request.loop.run_id, request.loop.node_id)

    @workflow.signal(name=AGENT_WAIT_ANSWER_SIGNAL)
    def wait_answer(self, answer: AgentWaitAnswer) -> None:
        """How a wait the loop asked the run to open ended (kept until the loop reads it)."""
        self._asks.wait_answered(answer)

    @workflow.run
    async def run(self, request: AgentRuntimeLoopRequest) -> AgentLoopResult:
        loop = request.loop
        runtime = runtime_named(request.runtime)
        if runtime is None:
            raise ApplicationError(
                runtime_missing(request.runtime),
                type=ErrorCode.CONFIG_INVALID.value,
                non_retryable=True,
            )
        arguments = loop.arguments
        max_turns = min(arguments.max_turns, loop.turns_allowed)
        checkpoint = runtime.open(None, opening_message(arguments.goal, arguments.context).text)
        turns, made, slices, asks, usage = 0, 0, 0, 0, TokenUsage()
        calls: list[AgentToolCall] = []
        stopped, answer = AgentStop.MAX_TURNS, None
        while turns < max_turns:
            limits = _limits(loop.allowance.limits, max_turns - turns, usage, made)
            if limits is None:
                break  # the node's allowance is spent
            slices += 1
            outcome = await _guarded(runtime.run_slice(checkpoint, _slice(loop, slices, limits)))
            checkpoint = outcome.checkpoint
            turns += outcome.turns
            made += len(outcome.tool_calls)
            usage = usage.plus(outcome.usage)
            calls = bounded_calls([*calls, *outcome.tool_calls])
            if outcome.status is SessionStatus.DONE:
                stopped, answer = AgentStop.ANSWERED, outcome.answer
                break
            if outcome.status is SessionStatus.WAITING and outcome.wait is not None:
                asks += 1
                checkpoint = runtime.apply_wait_result(
                    checkpoint, await self._wait(loop, asks, outcome.wait)
                )
            elif outcome.turns == 0 and not outcome.tool_calls:
                break  # a slice that could do nothing: its budget is spent
        if stopped is AgentStop.MAX_TURNS and turns < arguments.max_turns:
            stopped = AgentStop.BUDGET
        if answer is None:
            answer = best_answer([], stopped, turns)
        result = AgentResult(answer=answer, turns=turns, tool_calls=calls, stopped=stopped)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return AgentLoopResult(result=result, usage=usage, tool_calls_made=made, steps=[])

    async def _wait(self, loop: AgentLoopRequest, ask_id: int, wait: PendingWait) -> WaitResult:
        """The run opens the wait the slice ended on; how it ended, as the runtime takes it."""
        call_id = f"{loop.node_id}.{wait.call_id}"
        answer = await self._asks.wait(ask_id, call_id, wait.kind, wait.prompt)
        ok, result, why = wait_outcome(wait.kind, answer)
        return WaitResult(
            call_id=wait.call_id, tool=wait.tool, ok=ok, result=result, error=why or None
        )


async def _guarded(work: Awaitable[SliceResult]) -> SliceResult:
    """A slice whose runtime failed fails the node, with a code, as a failed model turn would:
    a plain exception (pydantic-ai re-raises a model's errors in workflow code under its own
    classes) would fail the workflow task instead, and the node would never end."""
    try:
        return await work
    except (ApplicationError, asyncio.CancelledError):
        raise
    except ActivityError as error:
        raise_if_cancelled(error)
        failure = ActivityFailure(error, PLAN_RETRY.maximum_attempts)
        code, why = failure.code.value, failure.message
    except Exception as error:
        code = ErrorCode.INVALID_MODEL_OUTPUT.value
        why = f"{type(error).__name__}: {(str(error).splitlines() or [''])[0]}"
    raise ApplicationError(
        f"the agent's runtime failed: {code}: {why}", type=code, non_retryable=True
    )


def _limits(granted: BudgetLimits, turns: int, usage: TokenUsage, made: int) -> SliceLimits | None:
    """The next slice's limits: the node's turns and allowance left (None: nothing is left)."""
    tokens = None if granted.max_tokens is None else granted.max_tokens - usage.total_tokens
    calls = None if granted.max_tool_calls is None else granted.max_tool_calls - made
    if (tokens is not None and tokens <= 0) or (calls is not None and calls <= 0):
        return None
    budget = BudgetLimits(
        max_tokens=tokens, max_tool_calls=calls, max_cost_usd=granted.max_cost_usd
    )
    return SliceLimits(max_turns=min(turns, SLICE_TURNS), budget=budget)


def _slice(loop: AgentLoopRequest, epoch: int, limits: SliceLimits) -> SliceRequest:
    """The node's next slice: its run is the slice's workflow, its id the slice's session."""
    return SliceRequest(
        session_id=loop.node_id,
        workflow_id=loop.run_id,
        scenario=loop.scenario,
        epoch=epoch,
        tools=loop.tools,
        limits=limits,
        provider=loop.provider,
        model=loop.model,
        task=loop.task,
        plan_attempt=loop.plan_attempt,
    )
