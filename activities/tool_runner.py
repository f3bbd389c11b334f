"""Activity: run one plan node's tool, with its arguments checked by the tool's pydantic model."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping

import structlog
from pydantic import BaseModel, JsonValue, ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities.attempt_clock import AttemptClock
from activities.heartbeats import with_heartbeats
from activities.llm import ProviderConfigError, ProviderError, ProviderRegistry
from activities.llm.charging import spent_by
from activities.mcp_hub import McpHub
from activities.provider_errors import config_failure, provider_failure
from activities.spending import Spending
from activities.token_stream import TokenPoster, live_replies
from activities.tool_metrics import record_tool_call
from harness.catalog.llm import TextReply, TextRequest
from harness.core.errors import ErrorCode, ToolError, is_retryable
from harness.core.problems import describe_invalid
from harness.core.redaction import redact
from harness.core.usage import TokenUsage
from harness.engine.contracts import PROBE_OPERATION_ACTIVITY, RUN_TOOL_ACTIVITY, RUN_TOOLS_ACTIVITY
from harness.engine.messages import (
    BatchCallOutcome,
    OperationProbe,
    ProbeRequest,
    ProbeState,
    ToolCallGroup,
    ToolCallGroupResult,
    ToolCallRequest,
    ToolCallResult,
)
from scenarios import UnknownScenarioError, get_scenario
from scenarios.base import Tool, ToolContext

log = structlog.get_logger()


def _tool_failure(
    code: ErrorCode, message: str, attempt: int, *, expected: bool = True
) -> ApplicationError:
    """An expected failure of a tool (its own ToolError, an injected fault, bad arguments): the
    run decides what follows, so the SDK logs it as benign, without a traceback. A crash is not
    expected, and keeps the SDK's warning. Its message is redacted: it reaches the run's history,
    trace, episode and the worker's log."""
    return ApplicationError(
        redact(message),
        {"attempt": attempt},
        type=code.value,
        non_retryable=not is_retryable(code),
        category=ApplicationErrorCategory.BENIGN
        if expected
        else ApplicationErrorCategory.UNSPECIFIED,
    )


def redacted_cause(error: Exception) -> Exception:
    """The cause a failure carries into history (its message is recorded there too), redacted,
    with the original's traceback."""
    message = redact(str(error))
    if isinstance(error, ToolError):
        return ToolError(error.code, message).with_traceback(error.__traceback__)
    return RuntimeError(f"{type(error).__name__}: {message}").with_traceback(error.__traceback__)


class ToolActivities:
    def __init__(
        self,
        providers: ProviderRegistry,
        services: Mapping[str, object] | None = None,
        mcp: McpHub | None = None,
        tokens: TokenPoster | None = None,
    ) -> None:
        """`tokens`: where what a tool writes goes as it streams (activities.token_stream)."""
        self._providers = providers
        self._services = dict(services or {})
        self._mcp = mcp
        self._tokens = tokens

    @activity.defn(name=RUN_TOOL_ACTIVITY)
    async def run_tool(self, request: ToolCallRequest) -> ToolCallResult:
        clock = AttemptClock(request.earlier_attempts)
        spending = Spending()
        try:
            with live_replies(self._tokens, request.run_id, request.node_id):
                result = await self._run_tool(request, clock, spending)
        except ApplicationError as error:
            record_tool_call(
                request.scenario, request.tool, "FAILED", error.type, clock.elapsed_ms()
            )
            cause = error.__cause__
            spent = spent_by(cause) if isinstance(cause, Exception) else None
            failure = spending.failed(clock.stamped(error), spent, clock.details)
            raise failure from cause
        record_tool_call(request.scenario, request.tool, "DONE", None, result.latency_ms)
        return result

    @activity.defn(name=RUN_TOOLS_ACTIVITY)
    async def run_tools(self, group: ToolCallGroup) -> ToolCallGroupResult:
        """Several cheap calls at once, each timed, logged and counted as its own; a call's
        failure is its outcome (the workflow retries it on its own), not the group's."""
        outcomes = await asyncio.gather(*(self._grouped(call) for call in group.calls))
        return ToolCallGroupResult(outcomes=list(outcomes))

    async def _grouped(self, request: ToolCallRequest) -> BatchCallOutcome:
        clock = AttemptClock(request.earlier_attempts, from_now=True)
        try:
            result = await self._run_tool(request, clock)
        except ApplicationError as error:
            record_tool_call(
                request.scenario, request.tool, "FAILED", error.type, clock.elapsed_ms()
            )
            return BatchCallOutcome(
                node_id=request.node_id,
                error_type=error.type,
                error_message=error.message,
                attempts=clock.attempt,
                timing=clock.timing(),
            )
        record_tool_call(request.scenario, request.tool, "DONE", None, result.latency_ms)
        return BatchCallOutcome(node_id=request.node_id, call=result, attempts=result.attempt)

    async def _run_tool(
        self, request: ToolCallRequest, clock: AttemptClock, spending: Spending | None = None
    ) -> ToolCallResult:
        attempt = clock.attempt
        logger = log.bind(
            run_id=request.run_id,
            node_id=request.node_id,
            tool=request.tool,
            activity_attempt=attempt,
        )
        tool = None if request.mcp is not None else _tool(request.scenario, request.tool, attempt)
        if request.fault is not None and attempt <= request.fault.times:
            message = f"injected fault: {request.fault.code.value} (attempt {attempt})"
            logger.info("tool.call", status="FAILED", code=request.fault.code.value, reason=message)
            raise _tool_failure(request.fault.code, message, attempt)
        context: ToolContext | None = None
        if tool is None:
            call = self._mcp_call(request, attempt)
        else:
            arguments = _arguments(tool, request, attempt)
            context = writing = self._context(request, attempt)
            call = tool.call(arguments, context)
            if spending is not None:
                spending.metered(lambda: writing.usage)
        carried = spending.details if spending is not None else ()
        try:
            result = await with_heartbeats(call, (*clock.details, *carried))
        except ToolError as error:
            latency = round(clock.elapsed_ms(), 2)
            logger.info(
                "tool.call",
                status="FAILED",
                code=error.code.value,
                reason=redact(error.message),
                latency_ms=latency,
            )
            raise _tool_failure(error.code, error.message, attempt) from redacted_cause(error)
        except ProviderError as error:
            logger.warning("tool.provider_error", code=error.code.value, reason=error.message)
            raise provider_failure(error, attempt) from error
        except ProviderConfigError as error:  # e.g. a run's worker model this worker cannot serve
            raise config_failure(error, attempt) from error
        except Exception as error:
            logger.exception("tool.crash")
            message = f"{request.tool} failed unexpectedly: {type(error).__name__}: {error}"
            raise _tool_failure(
                ErrorCode.TOOL_EXECUTION_FAILED, message, attempt, expected=False
            ) from redacted_cause(error)
        timing = clock.timing()
        latency_ms = (timing.finished_at - timing.started_at).total_seconds() * 1000
        logger.info("tool.call", status="DONE", latency_ms=round(latency_ms, 2))
        usage = context.usage if context is not None and context.usage.total_tokens else None
        if spending is not None and spending.earlier.total_tokens:
            usage = spending.plus_earlier(usage or TokenUsage())
        return ToolCallResult(
            result=result, attempt=attempt, latency_ms=latency_ms, usage=usage, timing=timing
        )

    def _context(self, request: ToolCallRequest, attempt: int) -> ToolContext:
        try:
            writer = self._providers.get(request.provider)
        except ProviderConfigError as error:
            raise config_failure(error, attempt) from error
        return ToolContext(
            run_id=request.run_id,
            node_id=request.node_id,
            attempt=attempt,
            writer=writer,
            services=self._services,
            task=request.task,
            plan_attempt=request.plan_attempt or 0,
            economy=request.economy,
            model=request.worker_model,
            cost_limited=request.cost_limited,
        )

    def _mcp_call(self, request: ToolCallRequest, attempt: int) -> Awaitable[JsonValue]:
        """The call of an MCP tool through the worker's connection to its server."""
        assert request.mcp is not None
        if self._mcp is None:
            message = f"{request.tool}: this worker has no MCP servers"
            raise _tool_failure(ErrorCode.CONFIG_INVALID, message, attempt)
        return self._mcp.call(request.scenario, request.mcp, request.arguments)

    @activity.defn(name=PROBE_OPERATION_ACTIVITY)
    async def probe_operation(self, request: ProbeRequest) -> OperationProbe:
        """Ask the tool's system what became of an uncertain call; UNKNOWN when it cannot."""
        attempt = activity.info().attempt
        tool = _tool(request.scenario, request.tool, attempt)
        if tool.probe is None:
            return OperationProbe(
                state=ProbeState.UNKNOWN, detail=f"{request.tool} cannot be asked for an outcome"
            )
        context = ToolContext(
            run_id=request.run_id,
            node_id=request.node_id,
            attempt=attempt,
            writer=_NoModel(),
            services=self._services,
        )
        try:
            probe = await with_heartbeats(tool.probe(request.operation_id, context))
        except ToolError as error:
            log.info("tool.probe_error", node_id=request.node_id, reason=error.message)
            raise _tool_failure(error.code, error.message, attempt) from error
        log.info("tool.probe", node_id=request.node_id, state=probe.state.value)
        return probe


class _NoModel:
    """A probe asks a system of record; it has no model to write with."""

    async def write(self, request: TextRequest) -> TextReply:
        raise ToolError(ErrorCode.CONFIG_INVALID, "an outcome probe cannot call a model")


def _arguments(tool: Tool, request: ToolCallRequest, attempt: int) -> BaseModel:
    try:
        return tool.arguments.model_validate(request.arguments)
    except ValidationError as error:
        message = f"{request.tool}: {describe_invalid(error, whole='arguments', limit=None)}"
        raise _tool_failure(ErrorCode.INVALID_ARGUMENT, message, attempt) from error


def _tool(scenario: str, name: str, attempt: int) -> Tool:
    try:
        tool = get_scenario(scenario).tool(name)
    except UnknownScenarioError as error:
        raise _tool_failure(ErrorCode.UNKNOWN_TOOL, str(error), attempt) from error
    if tool is None:
        message = f"tool '{name}' is not in the {scenario} catalog"
        raise _tool_failure(ErrorCode.UNKNOWN_TOOL, message, attempt)
    return tool
