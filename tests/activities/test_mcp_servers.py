"""The worker's connections to real MCP servers (mcp-server-git, mcp-server-time and the test
server of tests/mcp_servers/shifting.py, each started from its installed package): the catalog
as the planner sees it, calls, and each way a call can fail, mapped to the error taxonomy."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from activities.mcp_hub import McpHub, McpSources
from harness.catalog.mcp_tools import with_servers
from harness.catalog.tools import McpTarget, ToolCatalog
from harness.core.errors import ErrorCode, ToolError
from scenarios import get_scenario
from tests.mcp_servers.repositories import (
    ROOT,
    hub_over,
    kill_processes,
    make_repository,
    shifting_server,
    until_slow_calls,
)
from tool_servers.config import McpConfigError, McpServer

pytestmark = pytest.mark.timeout(120)

WRITE_TOOLS = {"git_commit", "git_add", "git_reset", "git_create_branch", "git_checkout"}


def shifting_hub(
    tmp_path: Path, offered: str, timeout_seconds: float = 60.0
) -> tuple[McpHub, Path, str]:
    """A hub whose one worker server is the shifting test server, offering the tools named in
    `offered`; with the file that names them (rewritten, it changes what a restart offers) and
    the marker on the server's command line (to kill it by)."""
    tools = tmp_path / "tools"
    tools.write_text(offered)
    marker = f"shift-{uuid.uuid4().hex[:8]}"
    server = shifting_server("shift", tools, marker, timeout_seconds=timeout_seconds)
    return McpHub(McpSources(worker=(server,)), os.environ), tools, marker


async def catalog_of(hub: McpHub, scenario: str) -> ToolCatalog:
    return with_servers(get_scenario(scenario).catalog(), await hub.listings(scenario))


async def test_the_git_servers_tools_reach_the_catalog_with_their_rules_and_no_repo_path(
    tmp_path: Path,
) -> None:
    make_repository(tmp_path / "repo", commits=2)
    hub = hub_over(tmp_path / "repo")
    try:
        catalog = await catalog_of(hub, "repo")
    finally:
        await hub.aclose()
    git = {tool.name: tool for tool in catalog.tools if tool.mcp is not None}
    assert {"git_log", "git_show", "git_diff", "git_status", *WRITE_TOOLS} <= set(git)
    assert catalog.tools[0].name == "write_repo_report"  # the scenario's own tools come first
    for name, tool in git.items():
        assert tool.mcp == McpTarget(server="git", tool=name, writes=name in WRITE_TOOLS)
        assert "repo_path" not in tool.arguments_schema["properties"]  # pinned by the worker
        assert tool.side_effects is (name in WRITE_TOOLS)
    assert git["git_log"].required_arguments() == []
    assert git["git_show"].required_arguments() == ["revision"]
    assert git["git_reset"].requires_approval  # destructive: always approved
    assert not git["git_commit"].requires_approval and not git["git_commit"].idempotent
    assert git["git_add"].idempotent  # may be retried


async def test_the_time_servers_tools_join_every_scenarios_catalog_and_answer(
    tmp_path: Path,
) -> None:
    time_server = McpServer(
        name="time",
        command=sys.executable,
        args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
    )
    hub = McpHub(McpSources(worker=(time_server,)), os.environ)
    try:
        catalog = await catalog_of(hub, "cities")
        answer = await hub.call(
            "cities", McpTarget(server="time", tool="get_current_time"), {"timezone": "Asia/Tokyo"}
        )
    finally:
        await hub.aclose()
    listed = {tool.name: tool for tool in catalog.tools if tool.mcp is not None}
    assert set(listed) == {"get_current_time", "convert_time"}
    assert all(not tool.side_effects for tool in listed.values())
    assert listed["get_current_time"].required_arguments() == ["timezone"]
    assert "get_population" in catalog.names()  # the scenario's own tools stay
    assert "Asia/Tokyo" in str(answer)


async def test_a_git_call_returns_the_servers_text_with_the_pinned_repository(
    tmp_path: Path,
) -> None:
    shas = make_repository(tmp_path / "repo", commits=3)
    hub = hub_over(tmp_path / "repo")
    try:
        log = await hub.call("repo", McpTarget(server="git", tool="git_log"), {"max_count": 2})
        with pytest.raises(ToolError) as bad_revision:
            await hub.call("repo", McpTarget(server="git", tool="git_show"), {"revision": "nope"})
        with pytest.raises(ToolError) as unknown:
            await hub.call("repo", McpTarget(server="git", tool="git_blame"), {})
    finally:
        await hub.aclose()
    assert isinstance(log, str) and shas[0] in log and shas[1] in log and shas[2] not in log
    assert bad_revision.value.code is ErrorCode.INVALID_ARGUMENT  # the planner plans around it
    assert "nope" in bad_revision.value.message
    assert unknown.value.code is ErrorCode.UNKNOWN_TOOL


async def test_a_server_that_died_between_calls_is_started_again_for_the_next_call(
    tmp_path: Path,
) -> None:
    hub, _, marker = shifting_hub(tmp_path, "slow")
    target = McpTarget(server="shift", tool="slow")
    try:
        first = await hub.call("synthetic", target, {"seconds": 0})
        assert kill_processes(marker) == 1
        await asyncio.sleep(0.3)
        second = await hub.call("synthetic", target, {"seconds": 0})
    finally:
        await hub.aclose()
    assert str(first).startswith("waited 0 s") and str(second).startswith("waited 0 s")
    assert first != second  # another process: nothing was sent to the dead one


@pytest.mark.parametrize(
    ("writes", "code", "words"),
    [
        (False, ErrorCode.TOOL_UNAVAILABLE, "is unavailable: its connection was lost during slow"),
        (True, ErrorCode.TIMEOUT, "was lost during slow, so its outcome is unknown"),
    ],
)
async def test_a_server_killed_mid_call_fails_a_read_as_unavailable_and_a_write_as_unknown(
    tmp_path: Path, writes: bool, code: ErrorCode, words: str
) -> None:
    hub, tools, marker = shifting_hub(tmp_path, "slow")
    target = McpTarget(server="shift", tool="slow", writes=writes)
    try:
        await hub.call("synthetic", target, {"seconds": 0})  # connected
        call = asyncio.create_task(hub.call("synthetic", target, {"seconds": 5}))
        await until_slow_calls(tools, 2)
        assert kill_processes(marker) == 1
        with pytest.raises(ToolError) as lost:
            await call
        again = await hub.call("synthetic", target, {"seconds": 0})
    finally:
        await hub.aclose()
    assert lost.value.code is code and words in lost.value.message
    assert str(again).startswith("waited 0 s")  # a new connection serves the next call


async def test_a_tool_removed_between_the_catalog_and_the_call_fails_as_unknown(
    tmp_path: Path,
) -> None:
    hub, tools, marker = shifting_hub(tmp_path, "echo,slow")
    try:
        catalog = await catalog_of(hub, "synthetic")
        assert {"echo", "slow"} <= set(catalog.names())
        tools.write_text("echo")  # the server's next start offers echo alone
        kill_processes(marker)
        await asyncio.sleep(0.3)
        with pytest.raises(ToolError) as gone:
            await hub.call("synthetic", McpTarget(server="shift", tool="slow"), {"seconds": 0})
    finally:
        await hub.aclose()
    assert gone.value.code is ErrorCode.UNKNOWN_TOOL
    assert "'slow'" in gone.value.message and "shift" in gone.value.message


async def test_a_call_past_the_servers_time_limit_fails_as_a_timeout(tmp_path: Path) -> None:
    hub, _, _ = shifting_hub(tmp_path, "slow", timeout_seconds=0.5)
    try:
        with pytest.raises(ToolError) as slow:
            await hub.call("synthetic", McpTarget(server="shift", tool="slow"), {"seconds": 3})
    finally:
        await hub.aclose()
    assert slow.value.code is ErrorCode.TIMEOUT


async def test_a_server_that_cannot_start_is_unavailable_by_name() -> None:
    server = McpServer(name="ghost", command="/nonexistent/mcp-ghost")
    hub = McpHub(McpSources(worker=(server,)), os.environ)
    try:
        with pytest.raises(ToolError) as failed:
            await hub.listings("cities")
    finally:
        await hub.aclose()
    assert failed.value.code is ErrorCode.TOOL_UNAVAILABLE
    assert "MCP server 'ghost' is unavailable: it did not start" in failed.value.message


async def test_a_secret_in_a_servers_environment_is_read_from_the_worker_and_never_listed(
    tmp_path: Path,
) -> None:
    tools = tmp_path / "tools"
    tools.write_text("whoami")
    secret = f"s3cret-{uuid.uuid4().hex}"
    server = shifting_server(
        "shift", tools, f"shift-{uuid.uuid4().hex[:8]}", env={"SHIFTING_TOKEN": "${TEST_TOKEN}"}
    )
    hub = McpHub(McpSources(worker=(server,)), {**os.environ, "TEST_TOKEN": secret})
    try:
        catalog = await catalog_of(hub, "synthetic")
        answer = await hub.call("synthetic", McpTarget(server="shift", tool="whoami"), {})
    finally:
        await hub.aclose()
    assert answer == f"a token of {len(secret)} characters"
    assert secret not in catalog.model_dump_json()
    assert "TEST_TOKEN" not in catalog.model_dump_json()
    assert secret not in repr(server.resolved({"TEST_TOKEN": secret}))


async def test_a_streamable_http_server_is_reached_with_the_workers_secret_header(
    tmp_path: Path, unused_tcp_port: int
) -> None:
    secret = f"s3cret-{uuid.uuid4().hex}"
    tools = tmp_path / "tools"
    tools.write_text("echo,whoami,slow")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp_servers.shifting"],
        cwd=ROOT,
        env={
            **os.environ,
            "SHIFTING_HTTP_PORT": str(unused_tcp_port),
            "SHIFTING_TOKEN": secret,
            "SHIFTING_TOOLS": str(tools),
        },
    )
    url = f"http://127.0.0.1:{unused_tcp_port}/mcp"
    with_token = McpServer(name="web", url=url, headers={"Authorization": "Bearer ${WEB_TOKEN}"})
    without = McpServer(name="web", url=url)
    try:
        await until_listening(unused_tcp_port)
        hub = McpHub(McpSources(worker=(with_token,)), {**os.environ, "WEB_TOKEN": secret})
        refused = McpHub(McpSources(worker=(without,)), os.environ)
        try:
            catalog = await catalog_of(hub, "synthetic")
            answer = await hub.call(
                "synthetic", McpTarget(server="web", tool="echo"), {"text": "hi"}
            )
            slow = McpTarget(server="web", tool="slow", writes=True)
            waited = await hub.call("synthetic", slow, {"seconds": 6})  # past httpx's own 5 s
            with pytest.raises(ToolError) as unauthorised:
                await refused.listings("synthetic")
        finally:
            await hub.aclose()
            await refused.aclose()
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert {"echo", "whoami"} <= set(catalog.names())
    assert answer == "hi"
    assert str(waited).startswith("waited 6 s")
    assert unauthorised.value.code is ErrorCode.AUTH_FAILED  # fatal: no retry mends it
    assert "refused the worker's credentials (HTTP 401)" in unauthorised.value.message
    assert secret not in catalog.model_dump_json()


async def until_listening(port: int) -> None:
    for _ in range(300):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise AssertionError(f"nothing listens on {port}")


async def test_a_failure_message_never_repeats_a_secret_of_the_servers_configuration() -> None:
    secret = f"s3cret-{uuid.uuid4().hex}"
    server = McpServer(name="leaky", command="/nonexistent/${LEAKY_TOKEN}/mcp")
    hub = McpHub(McpSources(worker=(server,)), {**os.environ, "LEAKY_TOKEN": secret})
    try:
        with pytest.raises(ToolError) as failed:
            await hub.listings("cities")
    finally:
        await hub.aclose()
    assert failed.value.code is ErrorCode.TOOL_UNAVAILABLE
    assert "/nonexistent/***/mcp" in failed.value.message and secret not in failed.value.message


def test_a_worker_whose_mcp_configuration_names_an_unset_variable_refuses_to_start(
    tmp_path: Path,
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        '{"mcpServers": {"t": {"url": "http://h/mcp", "headers": {"A": "${NOPE_X}"}}}}'
    )
    with pytest.raises(McpConfigError, match=r"MCP server 't' needs \$\{NOPE_X\}"):
        McpHub.from_environment({"HARNESS_MCP_CONFIG": str(config)})
