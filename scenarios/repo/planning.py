"""The offline planner of the repo scenario: a question about recent history becomes a log of
the last N commits, a closer look (show) at the newest few and the diff over the range, all in
parallel, then the report. It never plans a write tool: those run only from a plan a person gives,
and wait for approval there."""

from __future__ import annotations

import json
import re

from pydantic import JsonValue

from harness.catalog.tools import ToolCatalog
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from scenarios.base import PlanningError, PlanningInput

DEFAULT_COUNT = 10
MAX_COUNT = 200
SHOWN = 3
"""How many of the newest commits get a closer look (their patch)."""

_COUNT = re.compile(r"\b(?:last|latest|past|recent|newest)\s+(\d{1,4})\s+commits?\b", re.I)
_TOPIC = re.compile(r"\b(?:in|to|of|about|around|for|on)\s+(?:the\s+)?([A-Za-z][\w./-]{2,})", re.I)
_NOT_TOPIC = {
    "last", "latest", "past", "recent", "newest", "repository", "repo", "project", "codebase",
    "history", "commits", "commit", "git", "main", "branch", "log", "this", "these", "what", "why",
}  # fmt: skip
_ABOUT_HISTORY = re.compile(
    r"\b(commits?|changed?|changes|history|log|why|recent|diff|happened|who|when|touched)\b", re.I
)
_WRITES = re.compile(
    r"^\W*(?:please\s+)?(?:make a commit|commit|stage|unstage|add|reset|check ?out|"
    r"create (?:a )?branch|switch (?:to )?branch)\b",
    re.I,
)
"""A goal that asks for a change starts with a write verb and is not a question ('commit my
changes', 'reset the index'); 'Commit history of the scheduler?' and 'why was the reset logic
changed?' are questions."""
_DROPPED_ON = {"INVALID_ARGUMENT", "UNKNOWN_TOOL", "MISSING_INFO"}


def commit_count(goal: str) -> int:
    match = _COUNT.search(goal)
    return (
        min(int(match.group(1)), MAX_COUNT) if match and int(match.group(1)) > 0 else DEFAULT_COUNT
    )


def topic_of(goal: str) -> str | None:
    for match in _TOPIC.finditer(goal):
        word = match.group(1).strip("./-")
        if word.lower() not in _NOT_TOPIC and not word.isdigit():
            return word
    return None


def plan_repo(request: PlanningInput) -> Plan:
    goal = request.goal
    asked = next((line for line in goal.splitlines() if line.strip()), "")  # without answers
    if _WRITES.search(asked) and not asked.rstrip().endswith("?"):
        raise PlanningError(
            "the offline planner answers questions about the history and never changes the "
            "repository; to run a write tool (git_commit, git_add, git_reset, git_checkout, "
            "git_create_branch), give a plan with --plan: it waits for approval"
        )
    if not _ABOUT_HISTORY.search(goal):
        raise PlanningError(
            "ask about the repository's history, e.g. 'What changed in the scheduler in the "
            "last 20 commits, and why?'"
        )
    verification = [f.message for f in request.failures if f.code == "VERIFICATION_FAILED"]
    if verification:
        raise PlanningError(f"the report failed its check: {'; '.join(verification)}")
    failed = _failed_calls(request)
    lookups = _lookups(request.catalog, commit_count(goal))
    if _call_of(lookups[0]) in failed:
        raise PlanningError(f"the log of the repository failed: {failed[_call_of(lookups[0])]}")
    kept = [node for node in lookups if _call_of(node) not in failed]
    return Plan(nodes=[*kept, _report(goal, kept, topic_of(goal))])


def _failed_calls(request: PlanningInput) -> dict[tuple[str, str], str]:
    """The calls (tool and arguments) that failed in a way a new plan should go around: a
    node's failure names its call; the validator's names the node of the previous plan."""
    previous = (
        {node.id: node for node in request.previous_plan.nodes} if request.previous_plan else {}
    )
    failed: dict[tuple[str, str], str] = {}
    for failure in request.failures:
        if failure.code not in _DROPPED_ON:
            continue
        if failure.tool is not None:
            failed[(failure.tool, _key(failure.arguments or {}))] = failure.message
        elif failure.node_id in previous:
            failed[_call_of(previous[failure.node_id])] = failure.message
    return failed


def _call_of(node: PlanNode) -> tuple[str, str]:
    return node.tool, _key({b.name: b.value for b in node.arguments})


def _key(arguments: dict[str, JsonValue]) -> str:
    return json.dumps(arguments, sort_keys=True, default=str)


def _lookups(catalog: ToolCatalog, count: int) -> list[PlanNode]:
    """The log, the newest commits' patches and the diff over the range: the log first."""
    literal = ArgumentBinding.literal
    log = PlanNode(
        id="log", tool=_git_tool(catalog, "git_log"), arguments=[literal("max_count", count)]
    )
    shows = [
        PlanNode(
            id=f"show_{index}",
            tool=_git_tool(catalog, "git_show"),
            arguments=[literal("revision", "HEAD" if index == 0 else f"HEAD~{index}")],
        )
        for index in range(min(SHOWN, count))
    ]
    diff = PlanNode(
        id="diff",
        tool=_git_tool(catalog, "git_diff"),
        arguments=[literal("target", f"HEAD~{count}")],
    )
    return [log, *shows, diff]


def _report(goal: str, lookups: list[PlanNode], topic: str | None) -> PlanNode:
    literal, result = ArgumentBinding.literal, ArgumentBinding.node_result
    arguments = [literal("question", goal[:500]), result("log", "log")]
    arguments += [result("commits", n.id) for n in lookups if n.id.startswith("show_")]
    arguments += [result("diff", n.id) for n in lookups if n.id == "diff"]
    if topic:
        arguments.append(literal("topic", topic[:80]))
    return PlanNode(
        id="report",
        tool="write_repo_report",
        arguments=arguments,
        deps=[node.id for node in lookups],
    )


def _git_tool(catalog: ToolCatalog, name: str) -> str:
    """The catalog's name of the git server's tool (a clash may have prefixed it)."""
    for tool in catalog.tools:
        if tool.mcp is not None and tool.mcp.tool == name:
            return tool.name
    raise PlanningError(
        f"the catalog has no {name}: the repo scenario needs the git MCP server (mcp-server-git); "
        "is it installed in the worker's environment?"
    )
