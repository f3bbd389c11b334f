"""The built-in agent loop as an `AgentRuntime`: each slice is one `AgentLoop` child workflow
in slice mode (its turns and calls are activities in the child's history), started from the
session's conversation. Its checkpoint is the conversation, compacted as the loop fits it to
its context budget."""

from __future__ import annotations

from pydantic import BaseModel
from temporalio import workflow

from harness.catalog.agent_turns import AgentMessage, ToolResultMessage, UserMessage
from harness.engine.agent_allowance import AgentAllowance
from harness.engine.agent_conversation import compact_session
from harness.engine.agent_loop import (
    ASK_USER,
    AgentLoopRequest,
    AgentLoopResult,
    AgentLoopState,
    wait_of,
)
from harness.engine.agent_node import AgentArguments, AgentStop
from harness.engine.contracts import AGENT_LOOP_WORKFLOW
from harness.engine.sessions import (
    BUILTIN_RUNTIME,
    PendingWait,
    RuntimeCheckpoint,
    SessionStatus,
    SliceRequest,
    SliceResult,
    WaitResult,
)

CONTINUE_TEXT = "(continue)"
"""The goal a slice that only continues is given (the conversation says what the work is)."""


class BuiltinState(BaseModel):
    """The built-in loop's checkpoint: its conversation."""

    messages: list[AgentMessage]


class BuiltinRuntime:
    """The harness's own loop, one `AgentLoop` child per slice."""

    name = BUILTIN_RUNTIME

    def open(self, checkpoint: RuntimeCheckpoint | None, message: str | None) -> RuntimeCheckpoint:
        messages = _state(checkpoint).messages if checkpoint else []
        if message is not None:
            messages = compact_session([*messages, UserMessage(text=message)])
        return _checkpoint(messages)

    async def run_slice(self, checkpoint: RuntimeCheckpoint, request: SliceRequest) -> SliceResult:
        messages = _state(checkpoint).messages
        allowance = AgentAllowance(limits=request.limits.budget)
        goal = next((m.text for m in reversed(messages) if isinstance(m, UserMessage)), None)
        loop = AgentLoopRequest(
            run_id=request.workflow_id,
            scenario=request.scenario,
            node_id=f"{request.node_id}.slice{request.epoch}"
            if request.node_id
            else f"slice{request.epoch}",
            plan_attempt=request.plan_attempt,
            arguments=AgentArguments(
                goal=goal or CONTINUE_TEXT,
                tools=[spec.name for spec in request.tools] or [ASK_USER],
                max_turns=request.limits.max_turns,
            ),
            tools=request.tools,
            allowance=allowance,
            provider=request.provider,
            model=request.model,
            turns_allowed=request.limits.max_turns,
            task=request.task,
            carried=AgentLoopState(messages=messages, allowance=allowance),
            session_slice=True,
        )
        result: AgentLoopResult = await workflow.execute_child_workflow(
            AGENT_LOOP_WORKFLOW,
            loop,
            id=f"{request.workflow_id}-slice-{request.epoch}",
            result_type=AgentLoopResult,
            static_summary=f"slice {request.epoch} of session {request.session_id}",
        )
        return _outcome(result)

    def apply_wait_result(
        self, checkpoint: RuntimeCheckpoint, result: WaitResult
    ) -> RuntimeCheckpoint:
        messages = _state(checkpoint).messages
        answer = ToolResultMessage(
            call_id=result.call_id,
            tool=result.tool,
            ok=result.ok,
            result=result.result if result.ok else None,
            error=None if result.ok else result.error or "no answer",
        )
        return _checkpoint([*messages, answer])


def _outcome(loop: AgentLoopResult) -> SliceResult:
    state = loop.state
    messages = state.messages if state else []
    stopped = loop.result.stopped
    wait = None
    if state is not None and state.pending_wait is not None:
        call = state.pending_wait
        kind, prompt = wait_of(call)
        wait = PendingWait(call_id=call.id, tool=call.tool, kind=kind, prompt=prompt)
    if stopped is AgentStop.ANSWERED:
        status = SessionStatus.DONE
    elif stopped is AgentStop.WAITING and wait is not None:
        status = SessionStatus.WAITING
    else:
        status = SessionStatus.CONTINUATION_REQUIRED
    return SliceResult(
        status=status,
        checkpoint=_checkpoint(messages),
        answer=loop.result.answer if status is SessionStatus.DONE else None,
        wait=wait,
        turns=loop.result.turns,
        tool_calls=loop.result.tool_calls,
        usage=loop.usage,
    )


def _state(checkpoint: RuntimeCheckpoint) -> BuiltinState:
    return BuiltinState.model_validate(checkpoint.state)


def _checkpoint(messages: list[AgentMessage]) -> RuntimeCheckpoint:
    state = BuiltinState(messages=messages).model_dump(mode="json")
    return RuntimeCheckpoint(runtime=BUILTIN_RUNTIME, state=state)
