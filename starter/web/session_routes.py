"""`GET /sessions/SESSION_ID/events[?scope=SCOPE]`: a session's events as Server-Sent Events.

The events are read from the session's state (its query, polled every POLL_SECONDS), so
following a session adds nothing to its history: a message taken, a slice begun, its reply, a
wait opened and answered (harness.engine.session_events), each with an `id:` from which a
reconnect resumes (`Last-Event-ID`) with no event twice. Between them, the session's model
tokens as they stream (`event: token`, a TokenChunk, no `id:`: a view, not a record). The
stream stays open while the session lives (a comment line every PING_SECONDS keeps proxies from
closing it) and ends, with `event: end`, when the session's workflow closes.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from harness.engine.contracts import SESSION_QUERY
from harness.engine.session_events import START, SessionEventKind, SessionMark, session_events
from harness.engine.sessions import SESSION_ID_PATTERN, SessionState, session_workflow_id
from harness.governance.task_graph import scope_problem
from starter.web.context import WebContext
from starter.web.tokens import TokenChunk

POLL_SECONDS = 0.5
CLOSED_CHECK_POLLS = 4
"""At the first poll, every this many polls and after a query that failed, the server is asked
whether the session's workflow has closed."""
PING_SECONDS = 15
QUERY_TIMEOUT = timedelta(seconds=5)
DEFAULT_SCOPE = "default"  # as `harness chat` and Harness.send


def routes(context: WebContext) -> list[BaseRoute]:
    async def events(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        scope = request.query_params.get("scope", DEFAULT_SCOPE)
        if not re.match(SESSION_ID_PATTERN, session_id):
            return _refused(400, f"session id '{session_id}' must match {SESSION_ID_PATTERN}")
        if problem := scope_problem(scope):
            return _refused(400, problem)
        try:
            resumed = request.headers.get("last-event-id", "").strip()
            after = SessionMark.parse(resumed) if resumed else START
        except ValueError as error:
            return _refused(400, f"Last-Event-ID: {error}")
        handle = context.harness.client.get_workflow_handle(session_workflow_id(scope, session_id))
        try:
            await handle.describe()
        except RPCError as error:
            if error.status is RPCStatusCode.NOT_FOUND:
                return _refused(404, f"no session '{session_id}' in scope '{scope}'")
            return _refused(503, f"cannot reach Temporal: {error.message}")
        return EventSourceResponse(_follow(context, handle, after), ping=PING_SECONDS)

    return [Route("/sessions/{session_id}/events", events, methods=["GET"])]


async def _follow(
    context: WebContext, handle: WorkflowHandle[Any, Any], after: SessionMark
) -> AsyncIterator[ServerSentEvent]:
    """The session's events; its tokens where they belong: after the message and the slice
    they answer (a new reply's first chunk reads the state first), before the reply."""
    async with context.hub.follow(handle.id) as tokens:
        polls, read, reply = 0, True, ""
        held: list[TokenChunk] = []
        while True:
            polls += 1
            check = polls == 1 or not read or polls % CLOSED_CHECK_POLLS == 0
            closed = await _closed(handle) if check else None
            state = await _state(handle)
            read = state is not None
            events = session_events(after, state) if state is not None else []
            replied = next((n for n, e in enumerate(events) if e.kind in _AFTER_TOKENS), None)
            for index, event in enumerate(events):
                if index == replied:
                    for chunk in [*held, *_waiting(tokens)]:
                        yield _token(chunk)
                    held = []
                after = event.mark
                data = json.dumps(event.data)
                yield ServerSentEvent(data=data, event=event.kind.value, id=str(event.mark))
            for chunk in [*held, *_waiting(tokens)]:
                yield _token(chunk)
            held = []
            if closed is not None:
                yield ServerSentEvent(data=json.dumps({"status": closed}), event="end")
                return
            async for chunk in _arriving(tokens, POLL_SECONDS):
                if chunk.call != reply:  # a new reply: what it answers goes first
                    reply = chunk.call
                    held.append(chunk)
                    break
                yield _token(chunk)


_AFTER_TOKENS = frozenset(
    {SessionEventKind.REPLY, SessionEventKind.WAIT_OPENED, SessionEventKind.WAIT_ANSWERED}
)
"""The events that come after the tokens of the reply they carry."""


async def _state(handle: WorkflowHandle[Any, Any]) -> SessionState | None:
    """The session's state, or None when it cannot be read now (no worker, a failing task)."""
    try:
        state: SessionState = await handle.query(
            SESSION_QUERY, result_type=SessionState, rpc_timeout=QUERY_TIMEOUT
        )
    except (RPCError, WorkflowQueryFailedError):
        return None
    return state


async def _closed(handle: WorkflowHandle[Any, Any]) -> str | None:
    """How the session's workflow closed (COMPLETED, TERMINATED, ...), or None while it runs."""
    try:
        description = await handle.describe()
    except RPCError as error:
        return "GONE" if error.status is RPCStatusCode.NOT_FOUND else None
    status = description.status
    if status is None or status is WorkflowExecutionStatus.RUNNING:
        return None
    return status.name


def _waiting(tokens: asyncio.Queue[TokenChunk]) -> list[TokenChunk]:
    chunks = []
    while not tokens.empty():
        chunks.append(tokens.get_nowait())
    return chunks


async def _arriving(tokens: asyncio.Queue[TokenChunk], seconds: float) -> AsyncIterator[TokenChunk]:
    """The chunks that arrive within `seconds`."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    while (left := until - loop.time()) > 0:
        try:
            yield await asyncio.wait_for(tokens.get(), left)
        except TimeoutError:
            return


def _token(chunk: TokenChunk) -> ServerSentEvent:
    return ServerSentEvent(data=chunk.model_dump_json(exclude_none=True), event="token")


def _refused(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)
