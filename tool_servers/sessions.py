"""The worker's connections to its MCP servers: one per server, started on first use, shared by
every activity of the worker, and started again when it has died.

A connection is held by a task of its own: the SDK's client opens task groups (the stdio
server's process, the HTTP client) that must be closed by the task that opened them, while
activities, each a task, call through it concurrently.

Failures become ToolErrors with the taxonomy's codes:
- the server cannot be started or reached, its connection closes during a read, or an HTTP
  server answers 5xx or ends the session: TOOL_UNAVAILABLE (retried; the next attempt
  reconnects);
- the connection closes during a call with side effects: TIMEOUT, as its outcome is unknown (the
  run reconciles a write that runs once);
- a call past the server's time limit: TIMEOUT; an HTTP 429: RATE_LIMITED;
- a tool the server no longer lists: UNKNOWN_TOOL; arguments it refuses, or an error result:
  INVALID_ARGUMENT with the server's words, so the planner can plan around it as the MCP spec
  means it to;
- an HTTP server that refuses the worker's credentials: AUTH_FAILED; a `${NAME}` the worker's
  environment lacks: CONFIG_INVALID; anything else the SDK raises: TOOL_EXECUTION_FAILED.

No message repeats a secret of the server's configuration (see McpServer.secrets).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TextIO

import anyio
import httpx2
import structlog
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, CallToolResult
from pydantic import JsonValue

from harness.catalog.mcp_tools import McpListedTool, McpServerListing
from harness.core.errors import ErrorCode, ToolError
from harness.core.redaction import redact
from tool_servers.config import McpConfigError, McpServer
from tool_servers.results import content_text, listed_tool, node_result, protocol_error_code

log = structlog.get_logger()

CONNECT_TIMEOUT_SECONDS = 15.0
LIST_SECONDS = 20.0
"""How long a catalog waits for a server's tool list (the catalog activity has 30 s)."""
_HTTP_STAND_IN = "Server returned an error response"
"""The SDK's message for an HTTP error status it has no JSON-RPC error for."""
_TOOL_NAME = re.compile(r"[A-Za-z0-9._-]{1,128}")
"""The names the MCP spec allows a tool; a server's other names are not listed."""
LIST_PAGES = 50
"""A server that pages its tool list without end is cut off here."""
_TRANSPORT_ERRORS = (
    OSError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    httpx2.TransportError,
)


class _Connection:
    """One live client of one server, held open by its own task until closed or dead."""

    def __init__(self, source: McpServer, environment: Mapping[str, str]) -> None:
        self.source = source
        """The server as configured, with its `${NAME}`s."""
        self.server = source.resolved(environment)
        self.secrets = source.secrets(environment)
        self.http_status: int | None = None
        """The HTTP error status (400 and up) of the last POST a streamable HTTP server
        answered with one; read once by the failure it explains."""
        self._ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._ready.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._hold(), name=f"mcp:{source.name}")

    @property
    def alive(self) -> bool:
        """Still held, and its client still able to send (a server that exited closes it)."""
        if self._task.done() or self._stop.is_set():
            return False
        if not self._ready.done():
            return True  # still connecting
        if self._ready.cancelled() or self._ready.exception() is not None:
            return False
        session = getattr(self._ready.result(), "_session", None)
        dispatcher = getattr(session, "_dispatcher", None)
        return not getattr(dispatcher, "_closed", False)  # the SDK's flag: its stream ended

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    async def client(self) -> Client:
        async with asyncio.timeout(CONNECT_TIMEOUT_SECONDS):
            return await asyncio.shield(self._ready)

    async def close(self) -> None:
        """End the connection; a caller cancelled meanwhile is cancelled still."""
        self._stop.set()
        if not self._ready.done():
            self._ready.set_exception(ConnectionError("closed before it was ready"))
            self._task.cancel()
        try:
            async with asyncio.timeout(10):
                await asyncio.shield(self._task)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
        except Exception:  # the connection's own end; it is closed either way
            pass

    async def _note_status(self, response: httpx2.Response) -> None:
        if response.status_code >= 400 and response.request.method == "POST":
            self.http_status = response.status_code

    def take_status(self) -> int | None:
        status, self.http_status = self.http_status, None
        return status

    async def _hold(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                transport = await _transport(self.server, stack, self._note_status)
                client = await stack.enter_async_context(
                    Client(transport, read_timeout_seconds=self.server.timeout_seconds)
                )
                if not self._ready.done():
                    self._ready.set_result(client)
                await self._stop.wait()
        except BaseException as error:  # the connection's end, whatever ended it
            if not self._ready.done():
                self._ready.set_exception(
                    ConnectionError(f"{type(error).__name__}: {error}")
                    if isinstance(error, asyncio.CancelledError)
                    else error
                )
            elif not self._stop.is_set():
                reason = self.scrub(repr(error))
                log.warning("mcp.connection_lost", server=self.server.name, reason=reason)
            if isinstance(error, asyncio.CancelledError) and not self._stop.is_set():
                raise


async def _transport(
    server: McpServer,
    stack: contextlib.AsyncExitStack,
    on_response: Callable[[httpx2.Response], Awaitable[None]],
) -> Any:
    """The server's transport, not yet entered (the client enters it); an HTTP client with the
    server's headers (and `on_response` seeing each answer) is opened on `stack` first."""
    if server.command is not None:
        parameters = StdioServerParameters(
            command=server.command, args=server.args, env=server.env or None, cwd=server.cwd
        )
        return stdio_client(parameters, errlog=stack.enter_context(_stderr_log(server.name)))
    timeout = httpx2.Timeout(30.0, read=max(300.0, server.timeout_seconds + 30.0))
    http = create_mcp_http_client(headers=server.headers, timeout=timeout)
    http.event_hooks["response"].append(on_response)
    await stack.enter_async_context(http)
    return streamable_http_client(str(server.url), http_client=http)


STDERR_LINE_CHARS = 4000
"""A line of a server's stderr longer than this is logged in pieces."""


@contextlib.contextmanager
def _stderr_log(server: str) -> Iterator[TextIO]:
    """A pipe the server's stderr is written to, read by a thread that logs each line redacted
    (`mcp.stderr`): a server's traceback can quote its keys, and went to the worker's stderr
    as it was. The thread ends when the server and this end have closed the pipe."""
    read_fd, write_fd = os.pipe()
    writer = os.fdopen(write_fd, "w")

    def _forward() -> None:
        with os.fdopen(read_fd, "r", errors="replace") as reader:
            for line in reader:
                for start in range(0, max(len(line), 1), STDERR_LINE_CHARS):
                    piece = line[start : start + STDERR_LINE_CHARS].rstrip("\n")
                    if piece:
                        log.info("mcp.stderr", server=server, line=redact(piece))

    threading.Thread(target=_forward, name=f"mcp-stderr:{server}", daemon=True).start()
    try:
        yield writer
    finally:
        writer.close()


class McpSessions:
    """Every server's connection in this worker, by server name and configuration."""

    def __init__(self, environment: Mapping[str, str]) -> None:
        self._environment = environment
        self._connections: dict[tuple[str, str], _Connection] = {}
        self._lock = asyncio.Lock()
        self._closing: set[asyncio.Task[None]] = set()

    async def list_all(self, servers: Sequence[McpServer]) -> list[McpServerListing]:
        """What each server offers now, in the order given: listed at once, each within
        LIST_SECONDS (inside the catalog activity's time limit), so a server that hangs is
        named; when one fails, the others end first and the first failure in order is raised."""
        listed = await asyncio.gather(*(self._listing(s) for s in servers), return_exceptions=True)
        for outcome in listed:
            if isinstance(outcome, BaseException):
                raise outcome
        return [outcome for outcome in listed if isinstance(outcome, McpServerListing)]

    async def _listing(self, server: McpServer) -> McpServerListing:
        try:
            return await asyncio.wait_for(self.list_tools(server), LIST_SECONDS)
        except TimeoutError:
            message = f"MCP server '{server.name}' did not list its tools in {LIST_SECONDS:g} s"
            raise ToolError(ErrorCode.TOOL_UNAVAILABLE, message) from None

    async def list_tools(self, server: McpServer) -> McpServerListing:
        connection, client = await self._client(server)
        try:
            tools: list[McpListedTool] = []
            cursor: str | None = None
            for _ in range(LIST_PAGES):
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                tools.extend(listed_tool(tool) for tool in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        except Exception as error:
            raise self._failure(connection, "tools/list", error, writes=False) from None
        named = [tool for tool in tools if _TOOL_NAME.fullmatch(tool.name)]
        if len(named) < len(tools):
            odd = [connection.scrub(tool.name)[:80] for tool in tools if tool not in named]
            log.warning("mcp.tool_names_refused", server=server.name, names=odd)
        return McpServerListing(
            server=server.name,
            tools=named,
            prefix=server.prefix,
            pinned=sorted(server.arguments),
        )

    async def call(
        self,
        server: McpServer,
        tool: str,
        arguments: Mapping[str, JsonValue],
        *,
        writes: bool = True,
    ) -> JsonValue:
        """Call `tool` with the plan's arguments and the server's pinned ones; `writes`: the
        tool has side effects, so a connection lost during the call leaves its outcome
        unknown."""
        connection, client = await self._client(server)
        try:
            result = await client.call_tool(tool, {**arguments, **connection.server.arguments})
        except Exception as error:
            raise self._failure(connection, tool, error, writes=writes) from None
        if result.is_error:
            raise await self._error_result(connection, tool, result)
        return node_result(result)

    async def aclose(self) -> None:
        async with self._lock:
            connections, self._connections = list(self._connections.values()), {}
        await asyncio.gather(*(c.close() for c in connections), *self._closing)

    async def _client(self, server: McpServer) -> tuple[_Connection, Client]:
        """The server's live connection (started now if it has none) and its client."""
        key = _key(server)
        async with self._lock:
            connection = self._connections.get(key)
            if connection is None or not connection.alive:
                if connection is not None:
                    self._close_later(connection)
                try:
                    connection = _Connection(server, self._environment)
                except McpConfigError as error:
                    raise ToolError(ErrorCode.CONFIG_INVALID, str(error)) from None
                self._connections[key] = connection
        try:
            return connection, await connection.client()
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            self._drop(connection)
            if (status := connection.take_status()) in (401, 403):
                raise _auth_failed(connection, status) from None
            raise _unavailable(connection, f"it did not start: {_reason(error)}") from None

    def _drop(self, connection: _Connection) -> None:
        """Forget a connection that failed (unless another call has replaced it already) and
        close it in the background: the caller's time is the run's."""
        key = _key(connection.source)
        if self._connections.get(key) is connection:
            del self._connections[key]
        self._close_later(connection)

    def _close_later(self, connection: _Connection) -> None:
        closing = asyncio.get_running_loop().create_task(connection.close())
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    def _failure(
        self, connection: _Connection, tool: str, error: Exception, *, writes: bool
    ) -> ToolError:
        """What a failed request means; a connection that is gone is dropped."""
        name = connection.server.name
        lost = uncertain = False
        status = connection.take_status()
        message = f"{type(error).__name__}: {error}"
        if isinstance(error, MCPError):
            code, message = protocol_error_code(error), error.error.message
            if code is ErrorCode.TOOL_UNAVAILABLE:  # the transport closed
                lost = uncertain = True
            elif error.error.code == INVALID_REQUEST and message == "Session terminated":
                code, lost = ErrorCode.TOOL_UNAVAILABLE, True  # refused: the call did not run
            elif error.error.code == INTERNAL_ERROR and message == _HTTP_STAND_IN and status:
                code = _code_of_status(status)
                uncertain = status >= 500  # the server failed while it handled the call
        elif isinstance(error, _TRANSPORT_ERRORS):
            code, lost = ErrorCode.TOOL_UNAVAILABLE, True
            uncertain = not isinstance(error, (httpx2.ConnectError, ConnectionRefusedError))
        else:
            code = ErrorCode.TOOL_EXECUTION_FAILED
        if lost or code is ErrorCode.AUTH_FAILED:
            self._drop(connection)
        if code is ErrorCode.AUTH_FAILED:
            return _auth_failed(connection, status)
        if code is ErrorCode.TOOL_UNAVAILABLE:
            if writes and uncertain and tool != "tools/list":
                return ToolError(
                    ErrorCode.TIMEOUT,
                    f"the connection to MCP server '{name}' was lost during {tool}, so its "
                    "outcome is unknown",
                )
            why = "its connection was lost" if lost else f"it answered HTTP {status}"
            return _unavailable(connection, f"{why} during {tool}")
        if code is ErrorCode.UNKNOWN_TOOL:
            return ToolError(code, f"MCP server '{name}' does not offer '{tool}' now")
        if code is ErrorCode.TIMEOUT:
            took = connection.server.timeout_seconds
            return ToolError(code, f"{tool} on MCP server '{name}' took over {took:g} s")
        if code is ErrorCode.RATE_LIMITED:
            return ToolError(code, f"MCP server '{name}' is rate limiting (HTTP {status})")
        return ToolError(code, connection.scrub(f"{tool} on MCP server '{name}': {message}"))

    async def _error_result(
        self, connection: _Connection, tool: str, result: CallToolResult
    ) -> ToolError:
        """An error result: a tool gone from the server's list is UNKNOWN_TOOL; anything else
        is the planner's to plan around."""
        name = connection.server.name
        text = connection.scrub(content_text(result))[:2000] or "(no message)"
        with contextlib.suppress(ToolError):
            listing = await self.list_tools(connection.source)
            if all(listed.name != tool for listed in listing.tools):
                message = f"MCP server '{name}' no longer offers '{tool}': {text}"
                return ToolError(ErrorCode.UNKNOWN_TOOL, message)
        return ToolError(ErrorCode.INVALID_ARGUMENT, f"{tool} answered with an error: {text}")


def _key(server: McpServer) -> tuple[str, str]:
    """A connection serves one server as configured: its name and the rest of it."""
    return server.name, server.model_dump_json()


def _code_of_status(status: int) -> ErrorCode:
    if status in (401, 403):
        return ErrorCode.AUTH_FAILED
    if status == 429:
        return ErrorCode.RATE_LIMITED
    if status >= 500 or status == 404:
        return ErrorCode.TOOL_UNAVAILABLE
    return ErrorCode.TOOL_EXECUTION_FAILED


def _auth_failed(connection: _Connection, status: int | None) -> ToolError:
    return ToolError(
        ErrorCode.AUTH_FAILED,
        f"MCP server '{connection.server.name}' refused the worker's credentials "
        f"(HTTP {status}): check its headers",
    )


def _unavailable(connection: _Connection, why: str) -> ToolError:
    message = f"MCP server '{connection.server.name}' is unavailable: {why}"
    return ToolError(ErrorCode.TOOL_UNAVAILABLE, connection.scrub(message))


def _reason(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_reason(inner) for inner in error.exceptions)
    if isinstance(error, TimeoutError):
        return f"no answer in {CONNECT_TIMEOUT_SECONDS:g} s"
    return f"{type(error).__name__}: {error}"
