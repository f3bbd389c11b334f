"""AgentLoopWorkflow: an agent node's bounded tool-use loop, as a child workflow of its run.

Each model turn is an activity on the LLM queue; each call the model asks for is an activity of
its own, with its tool's retries and timeout, all the calls of one turn at once. A call's node
id (`call_node_id`) is the same on every attempt, so a tool's idempotency key makes a side
effect in flight when a worker dies apply once; a turn or call that completed is in this
history and never runs again.

The budget is the run's: the loop spends only its allowance, and before a turn or call it cannot
pay for, it asks the run for more (a signal to the run, answered by a signal here). Refused, it
stops with `stopped: budget` and the best answer it has. Past `TURNS_PER_RUN` turns it continues
as new with its state (`AgentLoopState`), so a long loop never nears the history limits.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from pydantic import JsonValue, ValidationError
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from harness.catalog.agent_turns import (
    DEFAULT_TURN_OUTPUT_TOKENS,
    AgentTurnReply,
    AgentTurnRequest,
    ToolCall,
    ToolResultMessage,
)
from harness.catalog.tools import ToolSpec
from harness.core.errors import ErrorClass, classify
from harness.engine.agent_allowance import AgentAllowance
from harness.engine.agent_conversation import fit_conversation, opening_message
from harness.engine.agent_loop import (
    AGENT_SYSTEM,
    ASK_USER,
    CONTEXT_TOKENS,
    MIN_TURN_OUTPUT_TOKENS,
    TURNS_PER_RUN,
    WAIT_TOOLS,
    AgentLoopRequest,
    AgentLoopResult,
    AgentLoopState,
    AgentStep,
    AgentWaitAnswer,
    AgentWaitAsk,
    AllowanceAnswer,
    AllowanceAsk,
    AskUserArgs,
    RequestApprovalArgs,
    StepKind,
    best_answer,
    call_node_id,
    offered_tools,
    output_allowed,
    turn_need,
)
from harness.engine.agent_node import AgentResult, AgentStop, AgentToolCall
from harness.engine.budget import BudgetLimits
from harness.engine.contracts import (
    AGENT_ALLOWANCE_ANSWER_SIGNAL,
    AGENT_ALLOWANCE_ASK_SIGNAL,
    AGENT_LOOP_WORKFLOW,
    AGENT_TURN_ACTIVITY,
    AGENT_WAIT_ANSWER_SIGNAL,
    AGENT_WAIT_ASK_SIGNAL,
)
from harness.engine.messages import ToolCallRequest
from harness.waits.wait_book import WaitKind, WaitStatus
from workflows.activity_calls.failures import ActivityFailure, raise_if_cancelled
from workflows.activity_calls.placement import llm_queue, local_failures_are_activity_errors
from workflows.activity_calls.steps import LLM_HEARTBEAT_TIMEOUT, PLAN_RETRY, PLAN_TIMEOUT
from workflows.activity_calls.tools import policy_retry, run_tool_call, tool_call_summary

COST_ASK_USD = 0.01
"""What the loop asks the run for when its cost allowance is spent: a turn's worth of a small
model, asked again for each turn after."""


@workflow.defn(name=AGENT_LOOP_WORKFLOW)
class AgentLoopWorkflow:
    def __init__(self) -> None:
        self._answers: dict[int, AllowanceAnswer] = {}
        self._waits: dict[int, AgentWaitAnswer] = {}

    @workflow.signal(name=AGENT_ALLOWANCE_ANSWER_SIGNAL)
    def allowance_answer(self, answer: AllowanceAnswer) -> None:
        """The run's answer to an ask (kept until the loop reads it)."""
        self._answers[answer.ask_id] = answer

    @workflow.signal(name=AGENT_WAIT_ANSWER_SIGNAL)
    def wait_answer(self, answer: AgentWaitAnswer) -> None:
        """How a wait the loop asked the run to open ended (kept until the loop reads it)."""
        self._waits[answer.ask_id] = answer

    @workflow.run
    async def run(self, request: AgentLoopRequest) -> AgentLoopResult:
        llm_queue()  # decided in the first task, as every workflow that calls models does
        local_failures_are_activity_errors()
        self._request = request
        self._specs = {spec.name: spec for spec in request.tools}
        self._offered = offered_tools(request.tools)
        self._turns_allowed = request.turns_allowed
        arguments = request.arguments
        self._state = request.carried or AgentLoopState(
            messages=[opening_message(arguments.goal, arguments.context)],
            allowance=request.allowance,
        )
        stopped = await self._loop()
        state = self._state
        if state.fatal is not None:
            await workflow.wait_condition(workflow.all_handlers_finished)
            # the node fails as a node whose tool failed so would: the run halts on it
            raise ApplicationError(
                f"a call of the agent failed fatally: {state.fatal}",
                self._result(stopped).model_dump(mode="json"),
                type=state.fatal_code,
                non_retryable=True,
            )
        await workflow.wait_condition(workflow.all_handlers_finished)
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
        )

    async def _loop(self) -> AgentStop:
        state = self._state
        turns_here = 0
        while state.final_answer is None:
            if state.fatal is not None:
                return AgentStop.MAX_TURNS  # not reported as such: the loop fails (see run)
            if state.stopped is not None:
                return state.stopped
            if state.turns >= min(self._turns_allowed, self._request.arguments.max_turns):
                return AgentStop.MAX_TURNS
            if turns_here >= TURNS_PER_RUN or workflow.info().is_continue_as_new_suggested():
                await workflow.wait_condition(workflow.all_handlers_finished)
                carried = self._request.model_copy(
                    update={"carried": state, "turns_allowed": self._turns_allowed}
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
        reply: AgentTurnReply = await workflow.execute_activity(
            AGENT_TURN_ACTIVITY,
            AgentTurnRequest(
                run_id=self._request.run_id,
                node_id=self._request.node_id,
                turn=turn,
                system=AGENT_SYSTEM,
                messages=state.messages,
                tools=self._offered,
                provider=self._request.provider,
                model=self._request.model,
                economy=self._request.economy,
                max_output_tokens=output_allowed(state.allowance, prompt),
            ),
            task_queue=llm_queue(),
            result_type=AgentTurnReply,
            start_to_close_timeout=PLAN_TIMEOUT,
            heartbeat_timeout=LLM_HEARTBEAT_TIMEOUT,
            retry_policy=PLAN_RETRY,
            summary=f"{self._request.node_id} agent turn {turn}",
        )
        state.turns = turn
        state.allowance = state.allowance.spend_turn(reply.usage)
        state.usage = state.usage.plus(reply.usage)
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
            short = prompt + DEFAULT_TURN_OUTPUT_TOKENS - _tokens_left(allowance)
            if not await self._ask(BudgetLimits(max_tokens=max(short, 1))):
                return False
            if output_allowed(self._state.allowance, prompt) < MIN_TURN_OUTPUT_TOKENS:
                return False
        if _cost_spent(self._state.allowance) and not await self._ask(
            BudgetLimits(max_cost_usd=COST_ASK_USD)
        ):
            return False
        return not _cost_spent(self._state.allowance)

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
            state.messages.append(message)
            state.tool_calls.append(
                AgentToolCall(
                    tool=call.tool,
                    arguments=call.arguments,
                    ok=message.ok,
                    result=message.result if message.ok else None,
                    error=message.error,
                )
            )

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
    ) -> tuple[ToolResultMessage, int]:
        """One call as its own activity: the message the model reads, and the attempts made."""
        spec = self._specs.get(call.tool)
        if spec is None and call.tool in WAIT_TOOLS:
            return await self._wait(index, call), 0
        if spec is None:
            offered = ", ".join(tool.name for tool in self._offered)
            return self._refused(call, f"'{call.tool}' is not offered; the tools are {offered}")
        if attempts == 0:
            return self._refused(call, "not made: the tool-call budget is spent")
        turn = self._state.turns
        node_id = call_node_id(self._request.node_id, turn, index)
        started = workflow.now()
        try:
            result = await run_tool_call(
                self._tool_request(node_id, spec, call.arguments),
                local=spec.local,
                retry=policy_retry(spec.call_policy(attempts)),
                uses_llm=spec.uses_llm,
                summary=tool_call_summary(node_id, call.tool, call.arguments),
                policy=spec.call_policy(attempts),
            )
        except ActivityError as error:
            raise_if_cancelled(error)
            failure = ActivityFailure(error, attempts)
            text = f"{failure.code.value}: {failure.message}"
            if classify(failure.code) is ErrorClass.FATAL and self._state.fatal is None:
                self._state.fatal = f"{node_id} {call.tool}: {text}"
                self._state.fatal_code = failure.code.value
            self._step(turn, node_id, call.tool, started, ok=False, attempts=failure.attempts)
            return self._refused(call, text)[0], failure.attempts
        self._step(turn, node_id, call.tool, started, ok=True, attempts=result.attempt)
        message = ToolResultMessage(call_id=call.id, tool=call.tool, ok=True, result=result.result)
        return message, result.attempt

    def _tool_request(
        self, node_id: str, spec: ToolSpec, arguments: dict[str, JsonValue]
    ) -> ToolCallRequest:
        request = self._request
        fault = next((f for f in request.faults if f.matches(spec.name, arguments)), None)
        return ToolCallRequest(
            run_id=request.run_id,
            scenario=request.scenario,
            node_id=node_id,
            tool=spec.name,
            arguments=arguments,
            provider=request.provider,
            fault=fault,
            task=request.task,
            plan_attempt=request.plan_attempt if request.task else None,
            economy=spec.uses_llm and request.economy,
            mcp=spec.mcp,
        )

    @staticmethod
    def _refused(call: ToolCall, error: str) -> tuple[ToolResultMessage, int]:
        return ToolResultMessage(call_id=call.id, tool=call.tool, ok=False, error=error), 0

    def _step(
        self,
        turn: int,
        node_id: str,
        tool: str,
        started: datetime,
        *,
        ok: bool,
        attempts: int,
    ) -> None:
        self._state.steps.append(
            AgentStep(
                kind=StepKind.CALL,
                turn=turn,
                started_at=started,
                finished_at=workflow.now(),
                call_id=node_id,
                tool=tool,
                ok=ok,
                attempts=attempts,
            )
        )

    # -- the loop's own waits, which the run opens ----------------------------------------

    async def _wait(self, index: int, call: ToolCall) -> ToolResultMessage:
        """`ask_user` or `request_approval`: the run opens the wait (it owns every wait) and
        says how it ended; the model reads the answer, the approval, or why there is none."""
        turn = self._state.turns
        node_id = call_node_id(self._request.node_id, turn, index)
        started = workflow.now()
        try:
            kind, prompt = _wait_of(call)
        except ValidationError as error:
            problem = "; ".join(str(e["msg"]) for e in error.errors())
            return self._refused(call, f"INVALID_ARGUMENT: {problem}")[0]
        state = self._state
        state.asks += 1
        ask = AgentWaitAsk(
            node_id=self._request.node_id,
            ask_id=state.asks,
            call_id=node_id,
            kind=kind,
            prompt=prompt,
        )
        run = workflow.get_external_workflow_handle(self._request.run_id)
        await run.signal(AGENT_WAIT_ASK_SIGNAL, ask)
        await workflow.wait_condition(lambda: ask.ask_id in self._waits)
        answer = self._waits.pop(ask.ask_id)
        ok, result, why = _wait_outcome(kind, answer)
        self._step(turn, node_id, call.tool, started, ok=ok, attempts=0)
        if not ok:
            return self._refused(call, why)[0]
        return ToolResultMessage(call_id=call.id, tool=call.tool, ok=True, result=result)

    # -- asking the run for more -----------------------------------------------------------

    async def _ask(self, wanted: BudgetLimits) -> bool:
        """Ask the run to add `wanted` to the allowance and wait for its answer; False when it
        has nothing to give."""
        state = self._state
        state.asks += 1
        ask = AllowanceAsk(
            node_id=self._request.node_id,
            ask_id=state.asks,
            wanted=wanted,
            spent=state.allowance.usage,
        )
        run = workflow.get_external_workflow_handle(self._request.run_id)
        await run.signal(AGENT_ALLOWANCE_ASK_SIGNAL, ask)
        await workflow.wait_condition(lambda: ask.ask_id in self._answers)
        answer = self._answers.pop(ask.ask_id)
        if answer.turns_allowed is not None:
            self._turns_allowed = answer.turns_allowed
        if answer.granted is None:
            return False
        state.allowance = state.allowance.with_grant(answer.granted)
        return True


def _wait_of(call: ToolCall) -> tuple[WaitKind, str]:
    """The wait a call of the loop's own tools asks for, and its prompt (ValidationError:
    arguments the model got wrong)."""
    if call.tool == ASK_USER:
        return WaitKind.USER_INPUT, AskUserArgs.model_validate(call.arguments).question
    approval = RequestApprovalArgs.model_validate(call.arguments)
    return WaitKind.APPROVAL, f"approve {approval.action}? reason: {approval.reason}"


def _wait_outcome(kind: WaitKind, answer: AgentWaitAnswer) -> tuple[bool, JsonValue, str]:
    """What the model is told: ok and a result, or the error that says why not."""
    if kind is WaitKind.APPROVAL:
        if answer.refusal is None:
            return True, {"approved": True, "wait": answer.wait_id}, ""
        return False, None, f"POLICY_VIOLATION: not approved ({answer.refusal})"
    if answer.status is WaitStatus.DELIVERED:
        return True, {"answer": answer.payload, "wait": answer.wait_id}, ""
    return False, None, f"no answer: wait {answer.wait_id} {answer.status.value.lower()}"


def _tokens_left(allowance: AgentAllowance) -> int:
    limit = allowance.limits.max_tokens
    return 0 if limit is None else max(limit - allowance.usage.tokens, 0)


def _cost_spent(allowance: AgentAllowance) -> bool:
    limit = allowance.limits.max_cost_usd
    return limit is not None and allowance.usage.cost_usd >= limit
