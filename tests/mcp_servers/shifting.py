"""A real MCP server (the official SDK's MCPServer, over stdio) for tests that need what the
published servers cannot do on demand: a slow call to kill mid-way, a tool list that changes when
the server restarts (the names in the file SHIFTING_TOOLS names, read at start), and a secret in
its environment that it uses and never repeats.

Run: python -m tests.mcp_servers.shifting
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

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


if __name__ == "__main__":
    build().run()
