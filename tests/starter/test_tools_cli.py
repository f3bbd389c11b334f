"""`harness tools` and `harness validate` with MCP servers: the CLI starts each server itself
and shows its tools as a planner will see them (a scenario's own, the worker's configured ones,
or any given with --mcp)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.mcp_servers.repositories import make_repository
from tests.starter.test_cli import HARNESS

TIME_SERVER = f"time={sys.executable} -m mcp_server_time --local-timezone UTC"


def harness(*args: str, **environment: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [HARNESS, *args],
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def test_tools_with_mcp_lists_a_servers_tools_as_the_planner_sees_them() -> None:
    code, stdout, stderr = harness("tools", "--mcp", TIME_SERVER, "--json")
    assert code == 0, stderr
    tools = {tool["name"]: tool for tool in json.loads(stdout)["tools"]}
    assert set(tools) == {"get_current_time", "convert_time"}
    assert tools["convert_time"]["mcp"] == {
        "server": "time",
        "tool": "convert_time",
        "writes": False,
    }
    assert not tools["convert_time"]["side_effects"]


def test_tools_with_mcp_finds_a_server_the_worker_configuration_names(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "clock": {
                        "command": sys.executable,
                        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
                    }
                }
            }
        )
    )
    code, stdout, stderr = harness(
        "tools", "--mcp", "clock", "--scenario", "cities", HARNESS_MCP_CONFIG=str(config)
    )
    assert code == 0, stderr
    assert "get_population" in stdout  # the scenario's own tools, then the server's
    assert stdout.count("get_current_time  [DATA]  MCP clock/get_current_time") == 1
    assert "clock_get_current_time" not in stdout  # the configured server is listed once


def test_the_repo_scenarios_tools_show_which_need_approval_and_validate_a_plan(
    tmp_path: Path,
) -> None:
    make_repository(tmp_path / "repo", commits=2)
    code, stdout, stderr = harness(
        "tools", "--scenario", "repo", HARNESS_REPO_PATH=str(tmp_path / "repo")
    )
    assert code == 0, stderr
    assert (
        "git_reset  [DATA]  side effects  retried  always needs approval  MCP git/git_reset"
        in stdout
    )
    assert "git_commit  [DATA]  side effects  runs once  MCP git/git_commit" in stdout
    assert "repo_path" not in stdout
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "nodes": [
                    {"id": "log", "tool": "git_log",
                     "arguments": [{"name": "max_count", "kind": "LITERAL", "value": "x"}]},
                    {"id": "report", "tool": "write_repo_report", "deps": ["log"], "arguments": [
                        {"name": "question", "kind": "LITERAL", "value": "what changed?"},
                        {"name": "log", "kind": "NODE_RESULT", "node_id": "log"}]},
                ]
            }
        )
    )  # fmt: skip
    code, stdout, _ = harness(
        "validate", str(plan), "--scenario", "repo", HARNESS_REPO_PATH=str(tmp_path / "repo")
    )
    assert code == 1
    assert "argument 'max_count' of git_log: expected integer, got string" in stdout


def test_a_server_that_does_not_start_is_one_line_and_the_unavailable_exit_code() -> None:
    code, _, stderr = harness("tools", "--mcp", "ghost=/nonexistent/mcp-ghost")
    assert code == 3
    [line] = stderr.strip().splitlines()
    assert line.startswith("harness: MCP server 'ghost' is unavailable: it did not start")


def test_a_bare_word_no_configuration_names_is_refused_not_run_as_a_program() -> None:
    """`--mcp time` without HARNESS_MCP_CONFIG once started the system's `time` program."""
    environment = {k: v for k, v in os.environ.items() if k != "HARNESS_MCP_CONFIG"}
    done = subprocess.run(
        [HARNESS, "tools", "--mcp", "time"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "no server of that name in HARNESS_MCP_CONFIG (none is configured)" in line
    assert "NAME=COMMAND" in line
