"""Activity: run one plan node's tool, with its arguments checked by the tool's pydantic model."""

from __future__ import annotations

import time
from collections.abc import Mapping

import structlog
from pydantic import ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.heartbeats import with_heartbeats
from activities.llm import ProviderConfigError, ProviderError, ProviderRegistry
from activities.provider_errors import config_failure, provider_failure
from harness.contracts import RUN_TOOL_ACTIVITY
from harness.errors import ErrorCode, ToolError, is_retryable
from harness.messages import ToolCallRequest, ToolCallResult
from harness.problems import describe_invalid
from scenarios import UnknownScenarioError, get_scenario
from scenarios.base import ToolContext

log = structlog.get_logger()


def _tool_failure(code: ErrorCode, message: str, attempt: int) -> ApplicationError:
    return ApplicationError(
        message, {"attempt": attempt}, type=code.value, non_retryable=not is_retryable(code)
    )


class ToolActivities:
    def __init__(
        self, providers: ProviderRegistry, services: Mapping[str, object] | None = None
    ) -> None:
        self._providers = providers
        self._services = dict(services or {})

    @activity.defn(name=RUN_TOOL_ACTIVITY)
    async def run_tool(self, request: ToolCallRequest) -> ToolCallResult:
        attempt = activity.info().attempt
        logger = log.bind(
            run_id=request.run_id, node_id=request.node_id, tool=request.tool, attempt=attempt
        )
        try:
            tool = get_scenario(request.scenario).tool(request.tool)
        except UnknownScenarioError as error:
            raise _tool_failure(ErrorCode.UNKNOWN_TOOL, str(error), attempt) from error
        if tool is None:
            message = f"tool '{request.tool}' is not in the {request.scenario} catalog"
            raise _tool_failure(ErrorCode.UNKNOWN_TOOL, message, attempt)
        if request.fault is not None and attempt <= request.fault.times:
            message = f"injected fault: {request.fault.code.value} (attempt {attempt})"
            logger.info("tool.injected_fault", code=request.fault.code.value)
            raise _tool_failure(request.fault.code, message, attempt)
        try:
            arguments = tool.arguments.model_validate(request.arguments)
        except ValidationError as error:
            message = f"{request.tool}: {describe_invalid(error, whole='arguments', limit=None)}"
            raise _tool_failure(ErrorCode.INVALID_ARGUMENT, message, attempt) from error
        try:
            writer = self._providers.get(request.provider)
        except ProviderConfigError as error:
            raise config_failure(error, attempt) from error
        context = ToolContext(
            run_id=request.run_id,
            node_id=request.node_id,
            attempt=attempt,
            writer=writer,
            services=self._services,
        )
        started = time.perf_counter()
        try:
            result = await with_heartbeats(tool.run(arguments, context))
        except ToolError as error:
            logger.info("tool.error", code=error.code.value, reason=error.message)
            raise _tool_failure(error.code, error.message, attempt) from error
        except ProviderError as error:
            logger.warning("tool.provider_error", code=error.code.value, reason=error.message)
            raise provider_failure(error, attempt) from error
        except Exception as error:
            logger.exception("tool.crash")
            message = f"{request.tool} failed unexpectedly: {type(error).__name__}: {error}"
            raise _tool_failure(ErrorCode.TOOL_EXECUTION_FAILED, message, attempt) from error
        latency_ms = (time.perf_counter() - started) * 1000
        logger.debug("tool.finish", latency_ms=round(latency_ms, 2))
        usage = context.usage if context.usage.total_tokens else None
        return ToolCallResult(result=result, attempt=attempt, latency_ms=latency_ms, usage=usage)
