"""The worker's connections to its MCP servers: one per server, started on first use, shared by
every activity of the worker, and started again after it dies.

A connection is held by a task of its own: the SDK's client opens task groups (the stdio
server's process, the HTTP client) that must be closed by the task that opened them, while
activities, each a task, call through it concurrently.

Failures become ToolErrors with the taxonomy's codes: a server that cannot be started or reached,
or whose connection closes, TOOL_UNAVAILABLE (retried: the next attempt reconnects); a call past
the server's time limit, TIMEOUT; a tool the server no longer lists, UNKNOWN_TOOL; arguments it
refuses, INVALID_ARGUMENT; an error result, INVALID_ARGUMENT with the server's words, so the
planner can plan around it as the MCP spec means it to; an HTTP server that refuses the worker's
credentials, AUTH_FAILED; a `${NAME}` the worker's environment lacks, CONFIG_INVALID.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx2
import structlog
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from pydantic import JsonValue

from harness.errors import ErrorCode, ToolError
from harness.mcp_tools import McpListedTool, McpServerListing
from tool_servers.config import McpConfigError, McpServer
from tool_servers.results import content_text, listed_tool, node_result, protocol_error_code

log = structlog.get_logger()

CONNECT_TIMEOUT_SECONDS = 20.0
"""Within the catalog's 30 s, so a server that never answers is named in the failure."""
LIST_PAGES = 50
"""A server that pages its tool list without end is cut off here."""


class _Connection:
    """One live client of one server, held open by its own task until closed or dead."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.refused: int | None = None
        """The HTTP status (401 or 403) a streamable HTTP server refused the worker with."""
        self._ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._hold(), name=f"mcp:{server.name}")

    @property
    def alive(self) -> bool:
        return not self._task.done() and not self._stop.is_set()

    async def client(self) -> Client:
        return await asyncio.wait_for(asyncio.shield(self._ready), CONNECT_TIMEOUT_SECONDS)

    async def close(self) -> None:
        self._stop.set()
        if not self._ready.done():
            self._task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(self._task, 10)

    async def _note_refusal(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            self.refused = response.status_code

    async def _hold(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                transport = await _transport(self.server, stack, self._note_refusal)
                client = await stack.enter_async_context(
                    Client(transport, read_timeout_seconds=self.server.timeout_seconds)
                )
                self._ready.set_result(client)
                await self._stop.wait()
        except BaseException as error:  # the connection's end, whatever ended it
            if not self._ready.done():
                self._ready.set_exception(error)
            elif not self._stop.is_set():
                log.warning("mcp.connection_lost", server=self.server.name, reason=repr(error))
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
        return stdio_client(parameters, errlog=sys.__stderr__ or sys.stderr)
    http = await stack.enter_async_context(
        httpx2.AsyncClient(
            headers=server.headers, follow_redirects=True, event_hooks={"response": [on_response]}
        )
    )
    return streamable_http_client(str(server.url), http_client=http)


class McpSessions:
    """Every server's connection in this worker, by server name."""

    def __init__(self, environment: Mapping[str, str]) -> None:
        self._environment = environment
        self._connections: dict[str, _Connection] = {}
        self._lock = asyncio.Lock()

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
        except MCPError as error:
            raise await self._protocol_failure(connection, "tools/list", error) from error
        except Exception as error:
            await self._drop(connection)
            raise _unavailable(server, f"listing its tools failed: {error!r}") from error
        return McpServerListing(
            server=server.name,
            tools=tools,
            prefix=server.prefix,
            pinned=sorted(server.arguments),
        )

    async def call(
        self, server: McpServer, tool: str, arguments: Mapping[str, JsonValue]
    ) -> JsonValue:
        """Call `tool` with the plan's arguments and the server's pinned ones."""
        connection, client = await self._client(server)
        try:
            result = await client.call_tool(tool, {**arguments, **server.arguments})
        except MCPError as error:
            raise await self._protocol_failure(connection, tool, error) from error
        except asyncio.CancelledError:
            raise
        except Exception as error:
            await self._drop(connection)
            raise _unavailable(server, f"the call of {tool} failed: {error!r}") from error
        if result.is_error:
            raise await self._error_result(server, tool, result)
        return node_result(result)

    async def aclose(self) -> None:
        async with self._lock:
            connections, self._connections = list(self._connections.values()), {}
        await asyncio.gather(*(connection.close() for connection in connections))

    async def _client(self, server: McpServer) -> tuple[_Connection, Client]:
        """The server's live connection (started now if it has none) and its client."""
        try:
            resolved = server.resolved(self._environment)
        except McpConfigError as error:
            raise ToolError(ErrorCode.CONFIG_INVALID, str(error)) from error
        stale = None
        async with self._lock:
            connection = self._connections.get(server.name)
            if connection is None or not connection.alive or connection.server != resolved:
                stale = connection
                connection = self._connections[server.name] = _Connection(resolved)
        if stale is not None:
            await stale.close()
        try:
            return connection, await connection.client()
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            await self._drop(connection)
            if connection.refused is not None:
                raise ToolError(
                    ErrorCode.AUTH_FAILED,
                    f"MCP server '{server.name}' refused the worker's credentials "
                    f"(HTTP {connection.refused}): check its headers",
                ) from error
            raise _unavailable(server, f"it did not start: {_reason(error)}") from error

    async def _drop(self, connection: _Connection) -> None:
        """Close a connection that failed, unless another call has replaced it already."""
        async with self._lock:
            if self._connections.get(connection.server.name) is connection:
                del self._connections[connection.server.name]
        await connection.close()

    async def _protocol_failure(
        self, connection: _Connection, tool: str, error: MCPError
    ) -> ToolError:
        server = connection.server
        code = protocol_error_code(error)
        if code is ErrorCode.TOOL_UNAVAILABLE:
            await self._drop(connection)
            return _unavailable(server, f"its connection closed during {tool}")
        if code is ErrorCode.UNKNOWN_TOOL:
            return ToolError(code, f"MCP server '{server.name}' does not offer '{tool}' now")
        if code is ErrorCode.TIMEOUT:
            return ToolError(
                code, f"{tool} on MCP server '{server.name}' took over {server.timeout_seconds:g} s"
            )
        return ToolError(code, f"{tool} on MCP server '{server.name}': {error.error.message}")

    async def _error_result(
        self, server: McpServer, tool: str, result: CallToolResult
    ) -> ToolError:
        """An error result: a tool gone from the server's list is UNKNOWN_TOOL; anything else
        is the planner's to plan around."""
        text = content_text(result)[:2000] or "(no message)"
        with contextlib.suppress(ToolError):
            listing = await self.list_tools(server)
            if all(listed.name != tool for listed in listing.tools):
                return ToolError(
                    ErrorCode.UNKNOWN_TOOL,
                    f"MCP server '{server.name}' no longer offers '{tool}': {text}",
                )
        return ToolError(ErrorCode.INVALID_ARGUMENT, f"{tool} answered with an error: {text}")


def _unavailable(server: McpServer, why: str) -> ToolError:
    return ToolError(
        ErrorCode.TOOL_UNAVAILABLE, f"MCP server '{server.name}' is unavailable: {why}"
    )


def _reason(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_reason(inner) for inner in error.exceptions)
    if isinstance(error, TimeoutError):
        return f"no answer in {CONNECT_TIMEOUT_SECONDS:g} s"
    return f"{type(error).__name__}: {error}"
