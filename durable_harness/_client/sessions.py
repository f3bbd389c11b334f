"""Sending a message to an agent session: one update-with-start, so the first message starts
the session's workflow and every later one reaches the same workflow (its latest run)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from durable_harness.exceptions import InvalidInput, RunFailed, Unavailable
from harness.core.actors import parse_actor
from harness.core.problems import describe_invalid
from harness.engine.contracts import AGENT_SESSION_WORKFLOW, SESSION_QUERY, SESSION_SEND_UPDATE
from harness.engine.sessions import (
    SessionMessage,
    SessionReply,
    SessionStart,
    SessionState,
    session_workflow_id,
)

REFUSED_TYPES = frozenset({"ValueError", "WAITING", "INVALID_ARGUMENT", "CONFIG_INVALID"})
"""A refused message's failure types (a validator's ValueError, the handler's refusals): bad input
(exit 2), not a slice that failed (exit 1)."""


def session_start(session_id: str, **fields: object) -> SessionStart:
    """The session's start (used only by the message that starts it), or one line to fix."""
    if "carried" in fields:
        raise InvalidInput("carried: a session's state is its own, never given")
    try:
        return SessionStart.model_validate({"session_id": session_id, **fields})
    except ValidationError as error:
        raise InvalidInput(f"session: {describe_invalid(error, whole='session')}") from error


def session_message(text: str | None, actor: str) -> SessionMessage:
    try:
        parse_actor(actor)
        return SessionMessage(text=text, actor=actor)
    except ValueError as error:  # a ValidationError is one too
        raise InvalidInput(f"message: {error}") from error


async def send(
    client: Client, task_queue: str, start: SessionStart, message: SessionMessage
) -> SessionReply:
    """`message` to the session, started as `start` when it is not running; its reply."""
    workflow_id = session_workflow_id(start.scope, start.session_id)
    operation: WithStartWorkflowOperation[Any, SessionState] = WithStartWorkflowOperation(
        AGENT_SESSION_WORKFLOW,
        start,
        id=workflow_id,
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        result_type=SessionState,
        static_summary=f"session {start.session_id} ({start.scenario})",
    )
    try:
        reply: SessionReply = await client.execute_update_with_start_workflow(
            SESSION_SEND_UPDATE,
            message,
            start_workflow_operation=operation,
            result_type=SessionReply,
        )
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        why = getattr(cause, "message", None) or str(cause)
        refused = not isinstance(cause, ApplicationError) or cause.type in REFUSED_TYPES
        raise (InvalidInput if refused else RunFailed)(f"session {start.session_id}: {why}") from (
            error
        )
    except WorkflowUpdateRPCTimeoutOrCancelledError as error:
        raise Unavailable(
            f"session {start.session_id}: no reply in time (is a worker running?); the message"
            " may still run: `harness chat SESSION --continue` reads its reply"
        ) from error
    except RPCError as error:
        if error.status is RPCStatusCode.UNAVAILABLE:
            raise Unavailable(f"cannot reach the server: {error.message}") from error
        if error.status is RPCStatusCode.RESOURCE_EXHAUSTED:
            raise Unavailable(
                f"session {start.session_id} is busy with other messages: send it again shortly"
            ) from error
        raise InvalidInput(f"session {start.session_id}: {error.message}") from error
    return reply


async def state(client: Client, scope: str, session_id: str) -> SessionState:
    handle = client.get_workflow_handle(session_workflow_id(scope, session_id))
    result: SessionState = await handle.query(SESSION_QUERY, result_type=SessionState)
    return result
