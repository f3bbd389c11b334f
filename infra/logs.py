"""Logging: pretty on a terminal, one JSON object per line otherwise, for every logger.

structlog renders the harness's own lines and, through its formatter on the standard library's
root handler, everyone else's too: the Temporal SDK's, the workflow and activity loggers', the
LLM SDKs' and the payment service's. One meaning per key: `run_id` is the harness run id (the
workflow id); Temporal's own ids stay inside `temporal_workflow` / `temporal_activity`; an
activity's try is `activity_attempt`, never `attempt` (the run's plan attempt, in the trace).
"""

from __future__ import annotations

import logging
import sys

import structlog
from temporalio import activity, workflow

from harness.core.redaction import redact

_SHARED: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso"),
]


def _redacted(
    logger: object, method: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    """Every line's values, its message and traceback included, pass through the redaction of
    memory: a tool's failure reason or an SDK's exception can quote a key."""
    return {key: _redact_value(value) for key, value in event.items()}


def _redact_value(value: object) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(item) for item in value]
    if isinstance(value, BaseException):
        return redact(repr(value))
    return value


def configure_logging(level: str = "INFO") -> None:
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer()
        if sys.stderr.isatty()
        else structlog.processors.JSONRenderer()
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*_SHARED, structlog.stdlib.ExtraAdder()],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _redacted,
            renderer,
        ],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    # The SDK appends a dict of workflow or activity info to the message text; its `extra`
    # keys carry the same as fields, so keep the message a message.
    workflow.logger.workflow_info_on_message = False
    activity.logger.activity_info_on_message = False
    structlog.configure(
        processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.stdlib.BoundLogger,
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
