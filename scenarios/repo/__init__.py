"""Scenario `repo`: answer questions about a real git repository's history through the git MCP
server (`mcp-server-git`, from PyPI), citing commit ids the repository has.

The repository is HARNESS_REPO_PATH in the worker's environment, else the worker's own working
directory (its enclosing git work tree)."""

from __future__ import annotations

import sys
from pathlib import Path

from scenarios.base import Environment, Pack
from scenarios.repo.check import check_repo_report, repo_rubric
from scenarios.repo.planning import plan_repo
from scenarios.repo.tools import TOOLS
from tool_servers.config import McpServer

REPO_PATH_VARIABLE = "HARNESS_REPO_PATH"


def repository(environment: Environment) -> Path:
    """The work tree the git server reads: the configured path's, or the working directory's."""
    start = Path(environment.get(REPO_PATH_VARIABLE, "").strip() or ".").resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def git_server(environment: Environment) -> tuple[McpServer, ...]:
    root = str(repository(environment))
    return (
        McpServer(
            name="git",
            command=sys.executable,
            args=["-m", "mcp_server_git", "--repository", root],
            arguments={"repo_path": root},
        ),
    )


SCENARIO = Pack(
    name="repo",
    eval_cases=Path(__file__).parent / "eval_cases.yaml",
    description="Investigate a real git repository's history through the git MCP server: what "
    "changed and why, citing commit ids.",
    example_goal="What changed in the scheduler in the last 20 commits, and why?",
    tools=TOOLS,
    check=check_repo_report,
    offline_plan=plan_repo,
    rubric=repo_rubric,
    mcp_servers=git_server,
)
