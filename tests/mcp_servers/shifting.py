"""A real MCP server (the official SDK's MCPServer, over stdio) for tests that need what the
published servers cannot do on demand: a slow call to kill mid-way, a tool list that changes when
the server restarts (the names in the file SHIFTING_TOOLS names, read at start), and a secret in
its environment that it uses and never repeats. Each `slow` call appends its process id to the
file SHIFTING_CALLS names as it starts, so a test can wait for a call to be under way before it
kills the server, instead of guessing with a sleep.

Run: python -m tests.mcp_servers.shifting [MARKER]  (stdio), or with SHIFTING_HTTP_PORT set, over
streamable HTTP on that port, answering only requests whose Authorization header is
`Bearer $SHIFTING_TOKEN`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
ALL_TOOLS = ("echo", "slow", "whoami")


def offered() -> set[str]:
    listed = os.environ.get("SHIFTING_TOOLS")
    if not listed:
        return set(ALL_TOOLS)
    return {name.strip() for name in Path(listed).read_text().split(",") if name.strip()}


def build() -> MCPServer:
    server = MCPServer("shifting")
    names = offered()

    if "echo" in names:

        @server.tool(
            name="echo",
            description="Say the text back",
            annotations=READ_ONLY,
            structured_output=False,
        )
        def echo(text: str) -> str:
            return text

    if "slow" in names:

        @server.tool(
            name="slow",
            description="Wait, then say so",
            annotations=READ_ONLY,
            structured_output=False,
        )
        def slow(seconds: float) -> str:
            calls = os.environ.get("SHIFTING_CALLS")
            if calls:
                with Path(calls).open("a") as started:
                    started.write(f"{os.getpid()}\n")
            time.sleep(seconds)
            return f"waited {seconds:g} s in process {os.getpid()}"

    if "whoami" in names:

        @server.tool(
            name="whoami",
            description="Whether the token is set",
            annotations=READ_ONLY,
            structured_output=False,
        )
        def whoami() -> str:
            token = os.environ.get("SHIFTING_TOKEN", "")
            return f"a token of {len(token)} characters" if token else "no token"

    return server


def require_token(app: ASGIApp, token: str) -> ASGIApp:
    """Refuse (401) any HTTP request without the bearer token."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
            await PlainTextResponse("no token", status_code=401)(scope, receive, send)
            return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    port = os.environ.get("SHIFTING_HTTP_PORT")
    if port:
        app = build().streamable_http_app()
        uvicorn.run(
            require_token(app, os.environ["SHIFTING_TOKEN"]),
            host="127.0.0.1",
            port=int(port),
            log_level="warning",
        )
    else:
        build().run()
