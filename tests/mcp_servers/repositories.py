"""Small git repositories with known commits, made by the tests, and MCP hubs over them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from activities.mcp_hub import McpHub, McpSources
from scenarios.repo import REPO_PATH_VARIABLE
from tool_servers.config import McpServer

ROOT = Path(__file__).parent.parent.parent
SCHEDULER_COMMITS = (3, 7, 11, 16)
"""Which of the commits (numbered from 1) change the scheduler."""


def git(repository: Path, *args: str) -> str:
    environment = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=repository, env=environment, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repository(path: Path, commits: int = 24) -> list[str]:
    """A repository of `commits` commits; the scheduler's say why in their message body.
    Returns every commit id, newest first."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for number in range(1, commits + 1):
        if number in SCHEDULER_COMMITS:
            target = path / "scheduler.py"
            message = f"scheduler: step {number}\n\nNodes started late under load (case {number})."
        else:
            target = path / f"notes_{number % 5}.txt"
            message = f"notes: entry {number}"
        with target.open("a") as file:
            file.write(f"change {number}\n")
        git(path, "add", ".")
        git(path, "commit", "-q", "-m", message)
    return git(path, "rev-list", "HEAD").split()


def shifting_server(
    name: str,
    tools_file: Path,
    marker: str,
    env: dict[str, str] | None = None,
    timeout_seconds: float = 60.0,
) -> McpServer:
    """The test server of tests/mcp_servers/shifting.py, offering the tools the file names;
    `marker` is on its command line, so a test can find (and kill) its process. It records each
    `slow` call it starts in `calls_file(tools_file)` (see `until_slow_calls`)."""
    return McpServer(
        name=name,
        command=sys.executable,
        args=["-m", "tests.mcp_servers.shifting", marker],
        cwd=str(ROOT),
        env={
            "SHIFTING_TOOLS": str(tools_file),
            "SHIFTING_CALLS": str(calls_file(tools_file)),
            **(env or {}),
        },
        timeout_seconds=timeout_seconds,
    )


def hub_over(repository: Path, *worker: McpServer) -> McpHub:
    """The worker's MCP servers: the repo scenario's git server on `repository`, and `worker`."""
    environment = {**os.environ, REPO_PATH_VARIABLE: str(repository)}
    base = McpSources.from_environment(environment)
    return McpHub(McpSources(worker=worker, scenarios=base.scenarios), environment)


def calls_file(tools_file: Path) -> Path:
    """Where the shifting server over `tools_file` records the `slow` calls it starts."""
    return tools_file.with_name(tools_file.name + ".calls")


async def until_slow_calls(tools_file: Path, count: int = 1) -> None:
    """Wait (generously: a loaded machine starts processes slowly) until the shifting server
    over `tools_file` has started `count` `slow` calls in all."""
    record = calls_file(tools_file)
    for _ in range(1200):
        if record.exists() and len(record.read_text().split()) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the shifting server never started slow call {count}")


def kill_processes(marker: str) -> int:
    """SIGKILL every process whose command line holds `marker`; how many there were."""
    found = subprocess.run(["pkill", "-9", "-f", marker], check=False)
    return 1 if found.returncode == 0 else 0
