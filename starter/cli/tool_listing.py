"""What `harness tools` and `harness validate` see of MCP servers: the CLI starts (or connects to)
each server itself, lists its tools and maps them as a worker's catalog does, so the listing is
what a planner will see."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence

from harness.catalog.mcp_tools import ToolNameClashError, keep_tools, with_servers
from harness.catalog.tools import ToolCatalog
from harness.core.errors import ErrorCode, ToolError
from scenarios.base import Pack
from starter.errors import EXIT_UNAVAILABLE, EXIT_USAGE, CliError
from tool_servers.config import McpConfigError, McpServer, worker_servers

_NAMED = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9_-]{0,39})=(?P<spec>.+)$", re.DOTALL)


def servers_from_flags(values: Sequence[str], environment: Mapping[str, str]) -> list[McpServer]:
    """Each `--mcp` value: a server HARNESS_MCP_CONFIG names, else `[NAME=]URL` (streamable
    HTTP) or `[NAME=]COMMAND ARGS...` (stdio)."""
    try:
        configured = {server.name: server for server in worker_servers(environment)}
    except McpConfigError as error:
        raise CliError(str(error)) from error
    servers: list[McpServer] = []
    for index, value in enumerate(values, start=1):
        if value in configured:
            servers.append(configured[value])
            continue
        named = _NAMED.match(value.strip())
        name, spec = (named["name"], named["spec"]) if named else (f"mcp{index}", value.strip())
        if spec.startswith(("http://", "https://")):
            servers.append(McpServer(name=name, url=spec))
            continue
        try:
            words = shlex.split(spec)
        except ValueError as error:
            raise CliError(f"--mcp {value!r}: {error}") from error
        if not words:
            raise CliError(
                "--mcp needs a server: a name from HARNESS_MCP_CONFIG, a URL or a command"
            )
        if not named and len(words) == 1 and "/" not in words[0]:
            raise CliError(_unknown_name(value, sorted(configured)))
        servers.append(McpServer(name=name, command=words[0], args=words[1:]))
    names = [server.name for server in servers]
    if len(set(names)) < len(names):
        raise CliError("two --mcp servers have one name; give each its own NAME=")
    return servers


def _unknown_name(value: str, configured: list[str]) -> str:
    """A bare word is a server's name, never a program found on the PATH: `--mcp time` with no
    configuration once started the system's `time`, which is no MCP server."""
    known = f"it names {', '.join(configured)}" if configured else "none is configured"
    return (
        f"--mcp {value!r}: no server of that name in HARNESS_MCP_CONFIG ({known}); to start a "
        f"program, give it as NAME=COMMAND (e.g. --mcp '{value}={value}') or by its path"
    )


async def catalog_with_servers(
    base: ToolCatalog,
    servers: Sequence[McpServer],
    environment: Mapping[str, str],
    scenario: Pack | None = None,
) -> ToolCatalog:
    """`base` with the servers' tools after it, as a worker's catalog activity lists them: of
    the scenario's own servers, only the tools it keeps (`mcp_tools`)."""
    if not servers:
        return base
    from tool_servers.sessions import McpSessions  # the MCP SDK: only when a server is asked

    sessions = McpSessions(environment)
    try:
        listings = await sessions.list_all(servers)
        if scenario is not None and scenario.mcp_tools is not None:
            own = {server.name for server in scenario_servers(scenario, environment)}
            listings = keep_tools(listings, scenario.mcp_tools, own, scenario.name)
        return with_servers(base, listings)
    except ToolError as error:
        bad_input = error.code is ErrorCode.CONFIG_INVALID  # a ${NAME} the environment lacks
        raise CliError(error.message, EXIT_USAGE if bad_input else EXIT_UNAVAILABLE) from error
    except ToolNameClashError as error:
        raise CliError(str(error)) from error
    finally:
        await sessions.aclose()


def scenario_servers(scenario: Pack, environment: Mapping[str, str]) -> list[McpServer]:
    """The scenario's own servers, then the worker's (as the same environment configures a
    worker started here)."""
    try:
        return [*scenario.mcp_servers(environment), *worker_servers(environment)]
    except McpConfigError as error:
        raise CliError(str(error)) from error
