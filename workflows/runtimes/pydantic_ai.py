"""The pydantic-ai agent runtime (`pydantic-ai`), on pydantic-ai's own Temporal integration.

The agent is a pydantic-ai `Agent` with the `TemporalDurability` capability (the successor of
`TemporalAgent` in pydantic-ai 2.68, which deprecates the wrapper): run in workflow code, each
of its model requests is an activity of pydantic-ai's, registered on the worker by its
`AgentPlugin` (worker.pydantic_ai). The worker builds the agent once, with the model its
setting names, and `install`s it; the workflow sandbox is given this module as the worker
loaded it (a passthrough module), so workflow code runs the worker's agent.

Its tools come from the pack, its waits go through the harness. The agent is offered the
slice's tools as an `ExternalToolset`: pydantic-ai defers every call of one (its run ends with
`DeferredToolRequests`), and the harness makes it, as the built-in loop does, as its own tool
activity (`workflows.agent_calls.make_call`: the tool's retries and timeout, an idempotency key
from the run and the call's id), or, for `ask_user`, `request_approval` and a tool that needs
approval, ends the slice WAITING on it. The next run is given the calls' results as
`DeferredToolResults`. (pydantic-ai only runs a tool in workflow code when it is registered on
the agent before the worker starts; the pack's tools are known per slice, so they are
deferred instead.)

A slice stops after `limits.max_turns` model requests (`UsageLimits.request_limit`; pydantic-ai
raises `UsageLimitExceeded` before the next one) and answers CONTINUATION_REQUIRED with the
history so far as its checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import ValidationError
from pydantic_ai import Agent, DeferredToolRequests, ToolDefinition
from pydantic_ai.durable_exec.temporal import TemporalDurability
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.models import Model
from pydantic_ai.toolsets import ExternalToolset
from pydantic_ai.usage import UsageLimits

from harness.catalog.agent_turns import OfferedTool, ToolCall
from harness.core.usage import TokenUsage
from harness.engine.agent_allowance import AgentAllowance
from harness.engine.agent_loop import (
    AGENT_SYSTEM,
    ASK_USER,
    WAIT_TOOLS,
    AgentLoopRequest,
    call_node_id,
    offered_tools,
    wait_of,
)
from harness.engine.agent_node import AgentArguments, AgentToolCall
from harness.engine.sessions import (
    PendingWait,
    RuntimeCheckpoint,
    SessionStatus,
    SliceRequest,
    SliceResult,
    WaitResult,
)
from harness.waits.wait_book import WaitKind
from workflows.activity_calls.steps import PLAN_RETRY
from workflows.activity_calls.tools import call_text
from workflows.agent_calls import make_call
from workflows.runtimes import register
from workflows.runtimes.pydantic_ai_state import (
    PYDANTIC_AI_RUNTIME,
    CallResult,
    DeferredCall,
    PydanticAIState,
    checkpoint_of,
    state_of,
    token_usage,
)

AGENT_NAME = "harness_agent"
"""The agent's name: pydantic-ai names its activities after it (`agent__harness_agent__...`)."""
TOOLSET_ID = "harness_pack"
MODEL_ACTIVITY_SECONDS = 120


def build_agent(model: Model) -> Agent[None, str | DeferredToolRequests]:
    """The runtime's agent: `model`, made durable by pydantic-ai's Temporal capability."""
    durability: TemporalDurability[None] = TemporalDurability(
        activity_config={
            "start_to_close_timeout": timedelta(seconds=MODEL_ACTIVITY_SECONDS),
            "retry_policy": PLAN_RETRY,  # as the harness's own model calls: capped, never forever
        }
    )
    return Agent(
        model,
        name=AGENT_NAME,
        instructions=AGENT_SYSTEM,
        output_type=[str, DeferredToolRequests],
        capabilities=[durability],
    )


@dataclass
class _Slice:
    """What one slice has done so far."""

    request: SliceRequest
    loop: AgentLoopRequest
    state: PydanticAIState
    allowance: AgentAllowance
    turns: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    tool_calls: list[AgentToolCall] = field(default_factory=list)

    def tokens_spent(self) -> bool:
        """The slice's tokens are spent: checked before each run, never inside one (a run cut
        after a response would leave its calls unmade in the history)."""
        most = self.request.limits.budget.max_tokens
        return most is not None and self.usage.total_tokens >= most

    def result(
        self, status: SessionStatus, answer: str | None = None, wait: PendingWait | None = None
    ) -> SliceResult:
        return SliceResult(
            status=status,
            checkpoint=checkpoint_of(self.state),
            answer=answer,
            wait=wait,
            turns=self.turns,
            tool_calls=self.tool_calls,
            usage=self.usage,
        )


class PydanticAIRuntime:
    """An `AgentRuntime` on a durable pydantic-ai agent."""

    name = PYDANTIC_AI_RUNTIME

    def __init__(self, agent: Agent[None, str | DeferredToolRequests]) -> None:
        self.agent = agent

    def open(self, checkpoint: RuntimeCheckpoint | None, message: str | None) -> RuntimeCheckpoint:
        state = state_of(checkpoint)
        if message is not None:
            prompt = f"{state.prompt}\n\n{message}" if state.prompt else message
            state = state.model_copy(update={"prompt": prompt}).compacted()
        return checkpoint_of(state)

    async def run_slice(self, checkpoint: RuntimeCheckpoint, request: SliceRequest) -> SliceResult:
        work = _Slice(
            request,
            _loop_request(request),
            state_of(checkpoint),
            AgentAllowance(limits=request.limits.budget),
        )
        specs = {spec.name: spec for spec in request.tools}
        while True:
            ended = await self._resolve(work, specs)
            if ended is not None:
                return ended
            if work.turns >= request.limits.max_turns or work.tokens_spent():
                return work.result(SessionStatus.CONTINUATION_REQUIRED)
            output = await self._run(work)
            if isinstance(output, str):
                return work.result(SessionStatus.DONE, answer=output)
            if output is None:
                return work.result(SessionStatus.CONTINUATION_REQUIRED)

    def apply_wait_result(
        self, checkpoint: RuntimeCheckpoint, result: WaitResult
    ) -> RuntimeCheckpoint:
        state = state_of(checkpoint)
        results, approved = dict(state.results), list(state.approved)
        if result.tool in WAIT_TOOLS or not result.ok:
            error = None if result.ok else result.error or "no answer"
            results[result.call_id] = CallResult(ok=result.ok, result=result.result, error=error)
        else:  # a pack tool's approval: the call is made in the next slice
            approved.append(result.call_id)
        update = {"results": results, "approved": approved, "waiting": None}
        return checkpoint_of(state.model_copy(update=update))

    # -- a slice's parts -------------------------------------------------------------------

    async def _resolve(self, work: _Slice, specs: dict[str, Any]) -> SliceResult | None:
        """Make the deferred calls that have no result yet, in order; the slice's end when one
        waits for a person or the budget has no call left."""
        state = work.state
        for index, deferred in state.unresolved():
            call = ToolCall(id=deferred.call_id, tool=deferred.tool, arguments=deferred.arguments)
            spec = specs.get(call.tool)
            if spec is None and call.tool in WAIT_TOOLS:
                try:
                    kind, prompt = wait_of(call)
                except ValidationError as error:
                    problem = "; ".join(str(e["msg"]) for e in error.errors())
                    self._settle(
                        work, call, CallResult(ok=False, error=f"INVALID_ARGUMENT: {problem}")
                    )
                    continue
                return self._waiting(work, call, kind, prompt)
            if spec is None:
                offered = ", ".join(tool.name for tool in offered_tools(work.request.tools))
                why = f"'{call.tool}' is not offered; the tools are {offered}"
                self._settle(work, call, CallResult(ok=False, error=why))
                continue
            if (spec.requires_approval or spec.side_effects) and call.id not in state.approved:
                node_id = call_node_id(work.loop.node_id, state.turns, index)
                summary = call_text(node_id, call.tool, call.arguments)
                return self._waiting(work, call, WaitKind.APPROVAL, f"approve {summary}?")
            allowance, attempts = work.allowance.reserve_tool_call(spec.attempts_per_call())
            if attempts == 0:  # the slice's calls are spent: the next slice makes it
                return work.result(SessionStatus.CONTINUATION_REQUIRED)
            outcome = await make_call(work.loop, spec, call, state.turns, index, attempts)
            work.allowance = allowance.settle_tool_call(attempts, outcome.attempts)
            message = outcome.message
            self._settle(
                work, call, CallResult(ok=message.ok, result=message.result, error=message.error)
            )
        return None

    def _settle(self, work: _Slice, call: ToolCall, outcome: CallResult) -> None:
        work.state = work.state.model_copy(
            update={"results": {**work.state.results, call.id: outcome}}
        )
        work.tool_calls.append(
            AgentToolCall.made(call, ok=outcome.ok, result=outcome.result, error=outcome.error)
        )

    def _waiting(self, work: _Slice, call: ToolCall, kind: WaitKind, prompt: str) -> SliceResult:
        work.state = work.state.model_copy(update={"waiting": call.id})
        wait = PendingWait(call_id=call.id, tool=call.tool, kind=kind, prompt=prompt)
        return work.result(SessionStatus.WAITING, wait=wait)

    async def _run(self, work: _Slice) -> str | DeferredToolRequests | None:
        """One run of the agent, from the history and the deferred calls' results: its answer,
        the calls it deferred, or None when the slice's turns ran out first."""
        state = work.state
        toolset = ExternalToolset[None](
            [_definition(tool) for tool in offered_tools(work.request.tools)], id=TOOLSET_ID
        )
        limits = UsageLimits(request_limit=work.request.limits.max_turns - work.turns)
        history = state.history()
        output: str | DeferredToolRequests | None = None
        async with self.agent.iter(
            state.prompt,
            message_history=history or None,
            deferred_tool_results=state.deferred_results(),
            toolsets=[toolset],
            usage_limits=limits,
        ) as run:
            try:
                async for _ in run:
                    pass
            except UsageLimitExceeded:
                output = None
            else:
                output = run.result.output if run.result is not None else None
            messages = run.all_messages()
            usage = run.usage
        work.turns += usage.requests
        work.usage = work.usage.plus(token_usage(usage, messages[len(history) :]))
        deferred = (
            [
                DeferredCall(call_id=c.tool_call_id, tool=c.tool_name, arguments=c.args_as_dict())
                for c in [*output.calls, *output.approvals]
            ]
            if isinstance(output, DeferredToolRequests)
            else []
        )
        work.state = state.with_history(messages).model_copy(
            update={
                "prompt": None,
                "deferred": deferred,
                "results": {},
                "approved": [],
                "turns": state.turns + usage.requests,
            }
        )
        return output


def _definition(tool: OfferedTool) -> ToolDefinition:
    return ToolDefinition(
        name=tool.name, description=tool.description, parameters_json_schema=tool.arguments_schema
    )


def _loop_request(request: SliceRequest) -> AgentLoopRequest:
    """What `make_call` needs of the calls' context: the run (the session, or the agent node's
    run), the pack, and the prefix of the calls' ids: the session's (or the node's), whose turns
    the checkpoint counts across slices, so a call's id is the same in whichever slice makes
    it (its approval's prompt names the id its call is made with)."""
    return AgentLoopRequest(
        run_id=request.workflow_id,
        scenario=request.scenario,
        node_id=request.calls_named(),
        plan_attempt=request.plan_attempt,
        arguments=AgentArguments(
            goal="(pydantic-ai)",
            tools=[spec.name for spec in request.tools] or [ASK_USER],
            max_turns=request.limits.max_turns,
        ),
        tools=request.tools,
        allowance=AgentAllowance(limits=request.limits.budget),
        provider=request.provider,
        model=request.model,
        turns_allowed=request.limits.max_turns,
        task=request.task,
    )


INSTALLED: PydanticAIRuntime | None = None
"""The runtime the worker installed (none: this process runs no pydantic-ai agent)."""


def install(model: Model) -> PydanticAIRuntime:
    """Build the agent on `model` and make it the runtime sessions and agent nodes find by
    name. The worker calls it once, before it starts."""
    global INSTALLED
    INSTALLED = PydanticAIRuntime(build_agent(model))
    register(INSTALLED)
    return INSTALLED
