"""An agent's model turn, an activity on the model queue; and each call the model asks for,
made as the node's own calls are: an activity (a local one for a cheap in-memory tool, on the
model queue for a tool that writes) with the tool's retries and timeout, limited to the attempts
the loop reserved for it. A call's node id (`call_node_id`) is the same on every attempt, so the
tool's idempotency key is too."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import JsonValue
from temporalio import workflow
from temporalio.exceptions import ActivityError

from harness.catalog.agent_turns import (
    AgentTurnReply,
    AgentTurnRequest,
    OfferedTool,
    ToolCall,
    ToolResultMessage,
)
from harness.catalog.tools import ToolSpec
from harness.core.errors import ErrorClass, ErrorCode, classify
from harness.engine.agent_loop import (
    AGENT_SYSTEM,
    AgentLoopRequest,
    AgentLoopState,
    AgentStep,
    StepKind,
    call_node_id,
    output_allowed,
)
from harness.engine.contracts import AGENT_TURN_ACTIVITY
from harness.engine.messages import ToolCallRequest
from workflows.activity_calls.failures import ActivityFailure, raise_if_cancelled
from workflows.activity_calls.placement import llm_queue
from workflows.activity_calls.steps import LLM_HEARTBEAT_TIMEOUT, PLAN_RETRY, PLAN_TIMEOUT
from workflows.activity_calls.tools import policy_retry, run_tool_call, tool_call_summary


async def model_turn(
    request: AgentLoopRequest,
    state: AgentLoopState,
    offered: list[OfferedTool],
    turn: int,
    prompt: int,
) -> AgentTurnReply:
    """Turn `turn` of the loop, whose prompt takes up to `prompt` tokens."""
    reply: AgentTurnReply = await workflow.execute_activity(
        AGENT_TURN_ACTIVITY,
        AgentTurnRequest(
            run_id=request.run_id,
            node_id=request.node_id,
            turn=turn,
            system=AGENT_SYSTEM,
            messages=state.messages,
            tools=offered,
            provider=request.provider,
            model=request.model,
            economy=request.economy,
            max_output_tokens=output_allowed(state.allowance, prompt),
            cost_limited=state.allowance.limits.max_cost_usd is not None,
        ),
        task_queue=llm_queue(),
        result_type=AgentTurnReply,
        start_to_close_timeout=PLAN_TIMEOUT,
        heartbeat_timeout=LLM_HEARTBEAT_TIMEOUT,
        retry_policy=PLAN_RETRY,
        summary=f"agent {request.node_id} turn {turn}",  # the node's tool first, as every node's
    )
    return reply


@dataclass(frozen=True)
class CallOutcome:
    """What the model reads, the attempts made, the step for the trace, and the code of a
    FATAL failure (which ends the loop)."""

    message: ToolResultMessage
    attempts: int
    step: AgentStep
    fatal: ErrorCode | None = None


async def make_call(
    request: AgentLoopRequest, spec: ToolSpec, call: ToolCall, turn: int, index: int, attempts: int
) -> CallOutcome:
    """`call`, the `index`-th of `turn`, with at most `attempts` attempts (more than none)."""
    node_id = call_node_id(request.node_id, turn, index)
    started = workflow.now()
    policy = spec.call_policy(attempts)
    try:
        result = await run_tool_call(
            tool_request(request, node_id, spec, call.arguments),
            local=spec.local,
            retry=policy_retry(policy),
            uses_llm=spec.uses_llm,
            summary=tool_call_summary(node_id, call.tool, call.arguments),
            policy=policy,
        )
    except ActivityError as error:
        raise_if_cancelled(error)
        failure = ActivityFailure(error, attempts)
        text = f"{failure.code.value}: {failure.message}"
        fatal = failure.code if classify(failure.code) is ErrorClass.FATAL else None
        message = ToolResultMessage(call_id=call.id, tool=call.tool, ok=False, error=text)
        step = call_step(turn, node_id, call.tool, started, ok=False, attempts=failure.attempts)
        step.error_code = failure.code.value
        step.message = text
        return CallOutcome(message, failure.attempts, step, fatal)
    message = ToolResultMessage(call_id=call.id, tool=call.tool, ok=True, result=result.result)
    step = call_step(turn, node_id, call.tool, started, ok=True, attempts=result.attempt)
    return CallOutcome(message, result.attempt, step)


def refused(call: ToolCall, error: str) -> ToolResultMessage:
    """What the model reads of a call that was not made, and why."""
    return ToolResultMessage(call_id=call.id, tool=call.tool, ok=False, error=error)


def call_step(
    turn: int, node_id: str, tool: str, started: datetime, *, ok: bool, attempts: int
) -> AgentStep:
    """The call as the run's trace shows it under its node."""
    return AgentStep(
        kind=StepKind.CALL,
        turn=turn,
        started_at=started,
        finished_at=workflow.now(),
        call_id=node_id,
        tool=tool,
        ok=ok,
        attempts=attempts,
    )


def tool_request(
    request: AgentLoopRequest, node_id: str, spec: ToolSpec, arguments: dict[str, JsonValue]
) -> ToolCallRequest:
    """The tool activity's request: the run's own, for this call."""
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
        cost_limited=spec.uses_llm and request.allowance.limits.max_cost_usd is not None,
        mcp=spec.mcp,
    )
