"""How an MCP server is configured: a command the worker starts (stdio) or a URL it connects to
(streamable HTTP), as the `mcpServers` files of other MCP clients write it.

Secrets stay in the worker: `${NAME}` in a command's arguments or environment, a URL or a header
is read from the worker's environment when it connects, and none of this configuration enters
a run's history (the catalog carries only the server's name and its tools).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, model_validator

from harness.core.problems import describe_invalid

MCP_CONFIG_VARIABLE = "HARNESS_MCP_CONFIG"
"""The worker's own MCP servers: the path of an `mcpServers` JSON file. Their tools join every
scenario's catalog."""

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class McpConfigError(ValueError):
    """A server's configuration cannot be used; the message says what to fix."""


class McpServer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
    type: Literal["stdio", "http", "streamable-http", "streamable_http"] | None = Field(
        default=None, description="Optional: the transport follows from command or url."
    )
    command: str | None = None
    args: list[str] = Field(default_factory=list, repr=False)
    env: dict[str, str] = Field(default_factory=dict, repr=False)
    cwd: str | None = None
    url: str | None = Field(default=None, repr=False)
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    prefix: str | None = Field(
        default=None, description="Put before each of its tools' names in the catalog."
    )
    arguments: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="Arguments the worker adds to every call; the planner never sees them.",
    )
    timeout_seconds: float = Field(default=60.0, gt=0, le=600)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a stdio server) or url (streamable HTTP)")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        """The server in words, without its environment or headers."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return str(self.url)

    def secrets(self, environment: Mapping[str, str]) -> list[str]:
        """What no message may repeat: each `${NAME}`'s value, and the values of the server's
        environment and headers, longest first."""
        texts = [self.command or "", *self.args, self.cwd or "", self.url or ""]
        texts += [*self.env.values(), *self.headers.values()]
        named = {match.group(1) for text in texts for match in _REFERENCE.finditer(text)}
        values = [environment[name] for name in named if name in environment]
        resolved = self.resolved(environment)
        values += [*resolved.env.values(), *resolved.headers.values()]
        return sorted({value for value in values if len(value) >= 4}, key=len, reverse=True)

    def resolved(self, environment: Mapping[str, str]) -> McpServer:
        """This server with each `${NAME}` replaced from the worker's environment."""

        def fill(text: str) -> str:
            def value(match: re.Match[str]) -> str:
                name = match.group(1)
                if name not in environment:
                    raise McpConfigError(
                        f"MCP server '{self.name}' needs ${{{name}}}: set {name} in the "
                        "worker's environment"
                    )
                return environment[name]

            return _REFERENCE.sub(value, text)

        return self.model_copy(
            update={
                "command": fill(self.command) if self.command is not None else None,
                "args": [fill(arg) for arg in self.args],
                "env": {key: fill(value) for key, value in self.env.items()},
                "cwd": fill(self.cwd) if self.cwd is not None else None,
                "url": fill(self.url) if self.url is not None else None,
                "headers": {key: fill(value) for key, value in self.headers.items()},
            }
        )


def parse_servers(raw: object, source: str) -> tuple[McpServer, ...]:
    """Servers from `{"mcpServers": {NAME: {...}}}` (or the inner mapping alone)."""
    servers = raw.get("mcpServers", raw) if isinstance(raw, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f"{source}: expected an object of servers by name (mcpServers)")
    found: list[McpServer] = []
    for name, body in servers.items():
        if not isinstance(body, dict):
            raise McpConfigError(f"{source}: server '{name}' must be an object")
        try:
            found.append(McpServer.model_validate({**body, "name": name}))
        except ValidationError as error:
            raise McpConfigError(
                f"{source}: server '{name}': {describe_invalid(error, whole='server')}"
            ) from error
    return tuple(found)


def load_servers(path: Path) -> tuple[McpServer, ...]:
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise McpConfigError(f"cannot read {path}: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise McpConfigError(f"{path}: not UTF-8 text (byte {error.start})") from error
    except json.JSONDecodeError as error:
        raise McpConfigError(f"{path}: not JSON ({error.msg}, line {error.lineno})") from error
    return parse_servers(raw, str(path))


def worker_servers(environment: Mapping[str, str]) -> tuple[McpServer, ...]:
    """The servers the worker's environment names (none when HARNESS_MCP_CONFIG is unset)."""
    path = environment.get(MCP_CONFIG_VARIABLE, "").strip()
    return load_servers(Path(path)) if path else ()
