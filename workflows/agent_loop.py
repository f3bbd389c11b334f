"""AgentLoopWorkflow: an agent node's bounded tool-use loop, as a child workflow of its run.

Each model turn is an activity on the LLM queue; each call the model asks for is an activity of
its own (`workflows.agent_calls`), all the calls of one turn at once. A turn or call that
completed is in this history and never runs again.

The loop spends only its allowance of the run's budget, asking the run for more when it must
(`workflows.agent_asks`); refused, it stops with `stopped: budget`. Every `turns_per_run` turns
it continues as new with its state, so a long loop never nears the history limits.
"""

from __future__ import annotations

import asyncio

from pydantic import ValidationError
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from harness.catalog.agent_turns import (
    DEFAULT_TURN_OUTPUT_TOKENS,
    AgentTurnReply,
    ToolCall,
    ToolResultMessage,
)
from harness.engine.agent_conversation import fit_conversation, opening_message
from harness.engine.agent_loop import (
    CONTEXT_TOKENS,
    COST_ASK_USD,
    MIN_TURN_OUTPUT_TOKENS,
    WAIT_TOOLS,
    AgentLoopRequest,
    AgentLoopResult,
    AgentLoopState,
    AgentStep,
    AgentWaitAnswer,
    AllowanceAnswer,
    StepKind,
    best_answer,
    bounded_calls,
    call_node_id,
    cost_short,
    offered_tools,
    output_allowed,
    tokens_left,
    turn_need,
    wait_of,
    wait_outcome,
)
from harness.engine.agent_node import AgentResult, AgentStop, AgentToolCall
from harness.engine.budget import BudgetLimits
from harness.engine.contracts import (
    AGENT_ALLOWANCE_ANSWER_SIGNAL,
    AGENT_LOOP_WORKFLOW,
    AGENT_WAIT_ANSWER_SIGNAL,
)
from harness.waits.wait_book import WaitKind
from workflows.activity_calls.failures import ActivityFailure, charged_usage, raise_if_cancelled
from workflows.activity_calls.placement import llm_queue, local_failures_are_activity_errors
from workflows.activity_calls.steps import PLAN_RETRY
from workflows.activity_calls.tools import call_text
from workflows.agent_asks import RunAsks
from workflows.agent_calls import call_step, make_call, model_turn, refused


@workflow.defn(name=AGENT_LOOP_WORKFLOW)
class AgentLoopWorkflow:
    @workflow.init
    def __init__(self, request: AgentLoopRequest) -> None:
        self._asks = RunAsks(request.run_id, request.node_id)

    @workflow.signal(name=AGENT_ALLOWANCE_ANSWER_SIGNAL)
    def allowance_answer(self, answer: AllowanceAnswer) -> None:
        """The run's answer to an ask for more (kept until the loop reads it)."""
        self._asks.allowance_answered(answer)

    @workflow.signal(name=AGENT_WAIT_ANSWER_SIGNAL)
    def wait_answer(self, answer: AgentWaitAnswer) -> None:
        """How a wait the loop asked the run to open ended (kept until the loop reads it)."""
        self._asks.wait_answered(answer)

    @workflow.run
    async def run(self, request: AgentLoopRequest) -> AgentLoopResult:
        llm_queue()  # decided in the first task, as every workflow that calls models does
        self._asks.reports_unawaited()
        local_failures_are_activity_errors()
        self._request = request
        self._specs = {spec.name: spec for spec in request.tools}
        self._offered = offered_tools(request.tools)
        self._turns_allowed = request.turns_allowed
        self._economy = request.economy
        arguments = request.arguments
        self._state = request.carried or AgentLoopState(
            messages=[opening_message(arguments.goal, arguments.context)],
            allowance=request.allowance,
        )
        stopped = await self._loop()
        state = self._state
        if state.fatal is not None:
            await self._asks.settle()
            # the node fails as a node whose tool failed so would: the run halts on it
            raise ApplicationError(
                f"a call of the agent failed fatally: {state.fatal}",
                self._result(stopped).model_dump(mode="json"),
                type=state.fatal_code,
                non_retryable=True,
            )
        await self._asks.settle()
        return self._result(stopped)

    def _result(self, stopped: AgentStop) -> AgentLoopResult:
        state = self._state
        answer = state.final_answer
        if answer is None:
            answer = best_answer(state.messages, stopped, state.turns)
        result = AgentResult(
            answer=answer, turns=state.turns, tool_calls=state.tool_calls, stopped=stopped
        )
        return AgentLoopResult(
            result=result,
            usage=state.usage,
            tool_calls_made=state.allowance.usage.tool_calls,
            steps=state.steps,
            state=state if self._request.session_slice else None,
        )

    async def _loop(self) -> AgentStop:
        state = self._state
        turns_here = 0
        while state.final_answer is None:
            if state.fatal is not None:
                return AgentStop.MAX_TURNS  # not reported as such: the loop fails (see run)
            if state.stopped is not None:
                return state.stopped
            max_turns = self._request.arguments.max_turns
            if state.turns >= min(self._turns_allowed, max_turns):
                # fewer turns than the node's most: the run's budget allowed no more
                return AgentStop.MAX_TURNS if state.turns >= max_turns else AgentStop.BUDGET
            suggested = workflow.info().is_continue_as_new_suggested()
            if turns_here >= self._request.turns_per_run or suggested:
                await self._asks.settle()
                carried = self._request.model_copy(
                    update={
                        "carried": state,
                        "turns_allowed": self._turns_allowed,
                        "economy": self._economy,
                    }
                )
                workflow.continue_as_new(carried)
            reply = await self._turn()
            if reply is None:
                return AgentStop.BUDGET
            turns_here += 1
            if reply.answer is not None:
                state.final_answer = reply.answer
                return AgentStop.ANSWERED
            await self._calls(reply.tool_calls)
            await self._report()
        return AgentStop.ANSWERED

    # -- a model turn ----------------------------------------------------------------------

    async def _turn(self) -> AgentTurnReply | None:
        """The next model turn; None when the allowance cannot pay for it and the run gives
        no more."""
        state = self._state
        fitted = fit_conversation(state.messages, CONTEXT_TOKENS)
        state.messages = fitted.messages  # what was cut stays cut, over continue-as-new too
        prompt = turn_need(state.messages, self._offered, 0)
        if not await self._afford_turn(prompt):
            return None
        turn = state.turns + 1
        started = workflow.now()
        try:
            request = self._request.model_copy(update={"economy": self._economy})
            reply = await model_turn(request, state, self._offered, turn, prompt)
        except ActivityError as error:
            raise_if_cancelled(error)
            failure = ActivityFailure(error, PLAN_RETRY.maximum_attempts)
            if (spent := charged_usage(failure)) is not None:  # the parent charges the loop's
                state.usage = state.usage.plus(spent)
            # the node fails as a node whose model call failed so would, with what it spent
            raise ApplicationError(
                f"turn {turn} of the agent failed: {failure.code.value}: {failure.message}",
                self._result(AgentStop.MAX_TURNS).model_dump(mode="json"),
                type=failure.code.value,
                non_retryable=True,
            ) from error
        state.turns = turn
        state.allowance = state.allowance.spend_turn(reply.usage)
        state.usage = state.usage.plus(reply.usage)
        state.dearest_turn_usd = max(state.dearest_turn_usd, reply.usage.cost_usd)
        state.messages.append(reply.message())
        calls = ", ".join(call.tool for call in reply.tool_calls)
        state.steps.append(
            AgentStep(
                kind=StepKind.TURN,
                turn=turn,
                started_at=started,
                finished_at=workflow.now(),
                usage=reply.usage,
                message=f"calls {calls}" if calls else "answered",
            )
        )
        return reply

    async def _afford_turn(self, prompt: int) -> bool:
        """The allowance pays for a turn with this prompt and room to write (and has cost left
        when cost is limited), asking the run for more when it does not: enough for one full
        turn, and a small step of cost."""
        allowance = self._state.allowance
        if output_allowed(allowance, prompt) < MIN_TURN_OUTPUT_TOKENS:
            short = prompt + DEFAULT_TURN_OUTPUT_TOKENS - tokens_left(allowance)
            if not await self._ask(BudgetLimits(max_tokens=max(short, 1))):
                return False
            if output_allowed(self._state.allowance, prompt) < MIN_TURN_OUTPUT_TOKENS:
                return False
        turn_usd = max(self._state.dearest_turn_usd, COST_ASK_USD)  # what a turn costs here
        more_usd = cost_short(self._state.allowance, turn_usd)
        if more_usd and not await self._ask(BudgetLimits(max_cost_usd=more_usd)):
            return False
        return not cost_short(self._state.allowance, turn_usd)

    # -- the calls of a turn ---------------------------------------------------------------

    async def _calls(self, calls: list[ToolCall]) -> None:
        """Every call of the turn at once (each with the attempts the allowance reserved for
        it); their results join the conversation in the order the model asked for them."""
        state = self._state
        reserved = [await self._reserve(call) for call in calls]
        outcomes = await asyncio.gather(
            *(
                self._call(index, call, attempts)
                for index, (call, attempts) in enumerate(zip(calls, reserved, strict=True))
            )
        )
        for call, attempts, (message, used) in zip(calls, reserved, outcomes, strict=True):
            if attempts:
                state.allowance = state.allowance.settle_tool_call(attempts, used)
            if message is None:  # the wait a session's slice ends on: answered later
                continue
            state.messages.append(message)
            state.tool_calls.append(
                AgentToolCall.made(call, ok=message.ok, result=message.result, error=message.error)
            )
        state.tool_calls = bounded_calls(state.tool_calls)  # one payload, far below 2 MB

    async def _reserve(self, call: ToolCall) -> int:
        """The attempts reserved for `call` (0: it is not made), asking the run for more calls
        when the allowance has none left."""
        spec = self._specs.get(call.tool)
        if spec is None:  # a wait of the loop's own, or a tool not offered: no call is made
            return 0
        wanted = spec.attempts_per_call()
        allowance, granted = self._state.allowance.reserve_tool_call(wanted)
        if granted == 0 and await self._ask(BudgetLimits(max_tool_calls=wanted)):
            allowance, granted = self._state.allowance.reserve_tool_call(wanted)
        self._state.allowance = allowance
        if granted == 0:
            self._state.stopped = AgentStop.BUDGET
        return granted

    async def _call(
        self, index: int, call: ToolCall, attempts: int
    ) -> tuple[ToolResultMessage | None, int]:
        """One call as its own activity: the message the model reads (none yet: the wait a
        session's slice ends on), and the attempts made."""
        spec = self._specs.get(call.tool)
        if spec is None and call.tool in WAIT_TOOLS:
            return await self._wait(index, call), 0
        if spec is None:
            offered = ", ".join(tool.name for tool in self._offered)
            return refused(call, f"'{call.tool}' is not offered; the tools are {offered}"), 0
        if attempts == 0:
            return refused(call, "not made: the tool-call budget is spent"), 0
        state = self._state
        held = spec.requires_approval or (spec.side_effects and self._request.approve_side_effects)
        if held and self._request.session_slice:  # a session's tools need none (session_tools)
            return refused(call, "POLICY_VIOLATION: needs an approval a slice cannot ask"), 0
        if held:
            call_id = call_node_id(self._request.node_id, state.turns, index)
            prompt = f"approve {call_text(call_id, call.tool, call.arguments)}?"
            state.asks += 1  # the run holds the call on its approval, as a node's
            answer = await self._asks.wait(state.asks, call_id, WaitKind.APPROVAL, prompt)
            if answer.refusal is not None:
                return refused(call, f"POLICY_VIOLATION: not approved ({answer.refusal})"), 0
        outcome = await make_call(self._request, spec, call, state.turns, index, attempts)
        state.steps.append(outcome.step)
        if outcome.fatal is not None and state.fatal is None:
            state.fatal = f"{outcome.step.call_id} {call.tool}: {outcome.message.error}"
            state.fatal_code = outcome.fatal.value
        return outcome.message, outcome.attempts

    async def _report(self) -> None:
        """Tell the run what the loop has spent and its steps since it last told it."""
        state = self._state
        if self._request.session_slice:
            return  # a session's slice has no run to tell: its result says it all
        steps, state.reported_steps = state.steps[state.reported_steps :], len(state.steps)
        await self._asks.report(state.allowance.usage, steps)

    # -- the loop's own waits, which the run opens ----------------------------------------

    async def _wait(self, index: int, call: ToolCall) -> ToolResultMessage | None:
        """`ask_user` or `request_approval`: the run opens the wait (it owns every wait) and
        says how it ended; the model reads the answer, the approval, or why there is none.
        A session's slice ends on its first wait instead (None: the session opens it)."""
        turn = self._state.turns
        node_id = call_node_id(self._request.node_id, turn, index)
        started = workflow.now()
        try:
            kind, prompt = wait_of(call)
        except ValidationError as error:
            problem = "; ".join(str(e["msg"]) for e in error.errors())
            return refused(call, f"INVALID_ARGUMENT: {problem}")
        if self._request.session_slice:  # the slice ends on its first wait
            if self._state.pending_wait is not None:
                return refused(call, "one question at a time: ask again once answered")
            self._state.pending_wait, self._state.stopped = call, AgentStop.WAITING
            return None
        self._state.asks += 1
        answer = await self._asks.wait(self._state.asks, node_id, kind, prompt)
        ok, result, why = wait_outcome(kind, answer)
        self._state.steps.append(call_step(turn, node_id, call.tool, started, ok=ok, attempts=0))
        if not ok:
            return refused(call, why)
        return ToolResultMessage(call_id=call.id, tool=call.tool, ok=True, result=result)

    # -- asking the run for more -----------------------------------------------------------

    async def _ask(self, wanted: BudgetLimits) -> bool:
        """Ask the run to add `wanted` to the allowance and wait for its answer; False when it
        has nothing to give."""
        state = self._state
        if self._request.session_slice:
            return False  # a slice has its own budget: what is left is for the next slice
        state.asks += 1
        answer = await self._asks.more(state.asks, wanted, state.allowance.usage)
        if answer.turns_allowed is not None:
            self._turns_allowed = answer.turns_allowed
        if answer.economy is not None:
            self._economy = answer.economy
        if answer.granted is None:
            return False
        state.allowance = state.allowance.with_grant(answer.granted)
        return True
