"""The repo scenario (scenarios/repo): reading git_log / git_show / git_diff answers, the report
check that every cited commit id is one the repository has, the offline planner (parallel
lookups through the git MCP server, never a write tool) and the report's draft."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import JsonValue

from harness.catalog.mcp_tools import (
    McpListedTool,
    McpServerListing,
    McpToolAnnotations,
    with_servers,
)
from harness.catalog.tools import ToolCatalog
from harness.core.errors import ErrorCode, FailureContext
from harness.core.plan import ArgumentKind, Plan, PlanNode
from harness.engine.validation import validate_plan
from scenarios import get_scenario
from scenarios.base import CheckInput, PlanningError, PlanningInput
from scenarios.repo.check import check_repo_report
from scenarios.repo.history import (
    Commit,
    cited_ids,
    known_shas,
    log_commits,
    shown_sha,
    touched_files,
)
from scenarios.repo.planning import plan_repo
from scenarios.repo.report import render_report

GOAL = "What changed in the scheduler in the last 20 commits, and why?"

FIRST = "a1b2c3d4e5" + "0" * 30
SECOND = "f6e5d4c3b2" + "1" * 30
THIRD = "0123456789abcdef" + "2" * 24

LOG = (
    "Commit history:\n"
    f"Commit: {SECOND}\n"
    "Author: T\n"
    "Date: 2026-12-02 06:28:45+00:00\n"
    "Message: scheduler: second\n\n"
    "Run ready nodes in parallel.\n\n\n"
    f"Commit: {FIRST}\n"
    "Author: U\n"
    "Date: 2026-12-01 09:00:00+00:00\n"
    "Message: docs: readme\n\n"
)

ONE_COMMIT_LOG = LOG[: LOG.index(f"Commit: {FIRST}")]

COMMITS = [
    Commit(
        sha=SECOND,
        author="T",
        date="2026-12-02 06:28:45+00:00",
        message="scheduler: second\n\nRun ready nodes in parallel.",
    ),
    Commit(sha=FIRST, author="U", date="2026-12-01 09:00:00+00:00", message="docs: readme"),
]
"""What LOG says, commit by commit (built by hand: log_commits misreads a log of several)."""

SHOW = (
    f"commit {SECOND}\n"
    "Author: T <t@example.com>\n"
    "Date:   2026-12-02 06:28:45 +0000\n\n"
    "    scheduler: second\n\n"
    "--- a/harness/scheduler.py\n"
    "+++ b/harness/scheduler.py\n"
    "@@ -1 +1 @@\n"
    "-old\n"
    "+new\n"
)

PATCH = (
    "diff --git a/harness/dag.py b/harness/dag.py\n"
    "--- a/harness/dag.py\n"
    "+++ b/harness/dag.py\n"
    "@@ -1 +1 @@\n"
    "-a\n"
    "+b\n"
    "--- a/old_name.py\n"
    "+++ /dev/null\n"
    "--- /dev/null\n"
    "+++ b/new_file.py\n"
    "--- a/harness/dag.py\n"
    "+++ b/harness/dag.py\n"
)

READ_ONLY = McpToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)


def git_tool(name: str, annotations: McpToolAnnotations, **properties: Any) -> McpListedTool:
    return McpListedTool(
        name=name,
        input_schema={
            "type": "object",
            "properties": {"repo_path": {"title": "Repo Path", "type": "string"}, **properties},
            "required": ["repo_path", *(p for p in properties if p != "max_count")],
        },
        annotations=annotations,
    )


def git_listing(prefix: str | None = None) -> McpServerListing:
    def write(destructive: bool, idempotent: bool) -> McpToolAnnotations:
        return McpToolAnnotations(
            read_only=False, destructive=destructive, idempotent=idempotent, open_world=False
        )

    text = {"type": "string"}
    return McpServerListing(
        server="git",
        prefix=prefix,
        pinned=["repo_path"],
        tools=[
            git_tool("git_log", READ_ONLY, max_count={"default": 10, "type": "integer"}),
            git_tool("git_show", READ_ONLY, revision=text),
            git_tool("git_diff", READ_ONLY, target=text),
            git_tool("git_commit", write(destructive=False, idempotent=False), message=text),
            git_tool("git_reset", write(destructive=True, idempotent=True)),
        ],
    )


def repo_catalog(prefix: str | None = None) -> ToolCatalog:
    return with_servers(get_scenario("repo").catalog(), [git_listing(prefix)])


def request(
    goal: str = GOAL,
    failures: list[FailureContext] | None = None,
    catalog: ToolCatalog | None = None,
) -> PlanningInput:
    return PlanningInput(
        goal=goal,
        catalog=catalog or repo_catalog(),
        attempt=2 if failures else 1,
        failures=failures or [],
        previous_plan=None,
    )


CALLS: dict[str, tuple[str, dict[str, JsonValue]]] = {
    "log": ("git_log", {"max_count": 20}),
    "show_0": ("git_show", {"revision": "HEAD"}),
    "show_1": ("git_show", {"revision": "HEAD~1"}),
    "show_2": ("git_show", {"revision": "HEAD~2"}),
    "diff": ("git_diff", {"target": "HEAD~20"}),
}


def failed(node_id: str, code: str) -> FailureContext:
    """The failure of the standard plan's node, as the run reports it (tool and arguments)."""
    tool, arguments = CALLS[node_id]
    return FailureContext(
        node_id=node_id, tool=tool, arguments=arguments, code=code, message=f"{node_id} failed"
    )


def literals(node: PlanNode) -> dict[str, JsonValue]:
    return {b.name: b.value for b in node.arguments if b.kind is ArgumentKind.LITERAL}


def bound(node: PlanNode) -> list[tuple[str, str | None]]:
    return [(b.name, b.node_id) for b in node.arguments if b.kind is ArgumentKind.NODE_RESULT]


def the(repo_plan: Plan, node_id: str) -> PlanNode:
    found = repo_plan.node(node_id)
    assert found is not None, f"no node {node_id} in {repo_plan.node_ids()}"
    return found


def check(report: str, results: dict[str, JsonValue] | None = None) -> list[str]:
    return check_repo_report(CheckInput(GOAL, report, {"log": LOG} if results is None else results))


# --- history ---------------------------------------------------------------------------------


def test_a_one_commit_log_is_read_field_by_field() -> None:
    (commit,) = log_commits(ONE_COMMIT_LOG)

    assert commit.sha == SECOND
    assert commit.author == "T"
    assert commit.date == "2026-12-02 06:28:45+00:00"
    assert commit.subject == "scheduler: second"
    assert commit.body == "Run ready nodes in parallel."


def test_a_git_log_answer_gives_each_of_its_commits_newest_first() -> None:
    commits = log_commits(LOG)

    assert [c.sha for c in commits] == [SECOND, FIRST]
    assert [c.author for c in commits] == ["T", "U"]
    assert [c.subject for c in commits] == ["scheduler: second", "docs: readme"]
    assert commits[1].body == ""


def test_a_commit_shows_a_short_id() -> None:
    assert log_commits(ONE_COMMIT_LOG)[0].short == SECOND[:10]


def test_a_log_without_commits_gives_none() -> None:
    assert log_commits("Commit history:\n") == []


def test_a_git_show_answer_gives_its_commit_id() -> None:
    assert shown_sha(SHOW) == SECOND


def test_text_without_a_commit_header_has_no_shown_id() -> None:
    assert shown_sha("fatal: bad revision 'HEAD~99'") is None


def test_a_patch_touches_each_changed_path_once_in_order() -> None:
    assert touched_files(PATCH) == ["harness/dag.py", "old_name.py", "new_file.py"]


def test_every_full_id_any_lookup_returned_is_known() -> None:
    results: dict[str, JsonValue] = {"log": LOG, "shows": [SHOW, {"text": THIRD}], "n": 3}

    assert known_shas(results) == {FIRST, SECOND, THIRD}


def test_cited_ids_are_the_hex_ids_in_backticks_once_each() -> None:
    text = f"`{SECOND[:10]}` added tests; `{FIRST}` and `{SECOND[:10]}` again"

    assert cited_ids(text) == [SECOND[:10], FIRST]


def test_hex_words_outside_backticks_and_short_tokens_are_not_cited() -> None:
    text = f"by Seed 3a97618d, see {FIRST}; `abc12` and `ABCDEF1234` and `deadbeefx`"
    assert cited_ids(text) == []


# --- check_repo_report -----------------------------------------------------------------------


def test_a_report_citing_short_ids_of_known_commits_passes() -> None:
    assert check(f"`{SECOND[:10]}` parallelised the scheduler; `{FIRST[:7]}` fixed docs.") == []


def test_a_report_citing_an_id_no_lookup_returned_is_refused() -> None:
    problems = check(f"`{SECOND[:10]}` and `9f9f9f9f9f` changed the scheduler.")

    assert len(problems) == 1
    assert "9f9f9f9f9f" in problems[0]
    assert "the repository does not have" in problems[0]


def test_a_report_citing_nothing_when_commits_are_known_is_refused() -> None:
    problems = check("The scheduler now runs nodes in parallel.")

    assert len(problems) == 1
    assert "cites no commit id" in problems[0]


def test_a_report_citing_nothing_when_no_commit_is_known_passes() -> None:
    assert check("The log returned no commits.", results={"log": "Commit history:\n"}) == []


@pytest.mark.parametrize("report", ["", "  \n "])
def test_an_empty_report_is_refused(report: str) -> None:
    assert check(report) == ["the report is empty"]


# --- plan_repo -------------------------------------------------------------------------------


def test_a_history_question_plans_parallel_lookups_and_one_report_on_all() -> None:
    repo_plan = plan_repo(request())

    assert repo_plan.node_ids() == ["log", "show_0", "show_1", "show_2", "diff", "report"]
    lookups = repo_plan.nodes[:-1]
    assert all(n.deps == [] for n in lookups)
    report = the(repo_plan, "report")
    assert report.tool == "write_repo_report"
    assert report.deps == [n.id for n in lookups]


def test_the_lookups_ask_for_the_commits_the_question_names() -> None:
    repo_plan = plan_repo(request())

    assert the(repo_plan, "log").tool == "git_log"
    assert literals(the(repo_plan, "log")) == {"max_count": 20}
    revisions = [literals(the(repo_plan, f"show_{i}"))["revision"] for i in range(3)]
    assert revisions == ["HEAD", "HEAD~1", "HEAD~2"]
    assert {the(repo_plan, f"show_{i}").tool for i in range(3)} == {"git_show"}
    assert the(repo_plan, "diff").tool == "git_diff"
    assert literals(the(repo_plan, "diff")) == {"target": "HEAD~20"}


def test_the_report_reads_every_lookup_and_carries_the_question_and_topic() -> None:
    report = the(plan_repo(request()), "report")

    assert bound(report) == [
        ("log", "log"),
        ("commits", "show_0"),
        ("commits", "show_1"),
        ("commits", "show_2"),
        ("diff", "diff"),
    ]
    assert literals(report) == {"question": GOAL, "topic": "scheduler"}


def test_the_plan_is_valid_for_the_catalog_with_the_git_server() -> None:
    catalog = repo_catalog()

    assert validate_plan(plan_repo(request(catalog=catalog)), catalog) == []


def test_the_plan_never_contains_a_tool_with_side_effects() -> None:
    catalog = repo_catalog()

    repo_plan = plan_repo(request(catalog=catalog))

    for n in repo_plan.nodes:
        spec = catalog.get(n.tool)
        assert spec is not None
        assert not spec.side_effects, n.tool


def test_a_prefixed_git_server_is_planned_under_its_catalog_names() -> None:
    catalog = repo_catalog(prefix="repo_")

    repo_plan = plan_repo(request(catalog=catalog))

    assert the(repo_plan, "log").tool == "repo_git_log"
    assert the(repo_plan, "diff").tool == "repo_git_diff"
    assert validate_plan(repo_plan, catalog) == []


def test_a_question_without_a_count_looks_at_the_last_ten_commits() -> None:
    repo_plan = plan_repo(request("What changed recently, and why?"))

    assert literals(the(repo_plan, "log")) == {"max_count": 10}
    assert literals(the(repo_plan, "diff")) == {"target": "HEAD~10"}
    assert "topic" not in literals(the(repo_plan, "report"))


@pytest.mark.parametrize(
    "goal",
    ["Commit my changes with the message 'fix scheduler'", "Reset the staged changes"],
)
def test_a_goal_that_would_change_the_repository_is_not_planned(goal: str) -> None:
    with pytest.raises(PlanningError, match="never changes the repository"):
        plan_repo(request(goal))


def test_a_goal_that_is_not_about_history_is_not_planned() -> None:
    with pytest.raises(PlanningError, match="history"):
        plan_repo(request("Compare Paris and Tokyo"))


def test_a_catalog_without_the_git_tools_is_not_planned() -> None:
    with pytest.raises(PlanningError, match="git_log"):
        plan_repo(request(catalog=get_scenario("repo").catalog()))


def test_a_replan_after_an_invalid_diff_drops_the_diff_and_its_binding() -> None:
    catalog = repo_catalog()
    failure = failed("diff", ErrorCode.INVALID_ARGUMENT)

    repo_plan = plan_repo(request(failures=[failure], catalog=catalog))

    assert "diff" not in repo_plan.node_ids()
    report = the(repo_plan, "report")
    assert "diff" not in report.deps
    assert all(name != "diff" for name, _ in bound(report))
    assert validate_plan(repo_plan, catalog) == []


def test_a_replan_after_a_failed_show_keeps_the_other_shows() -> None:
    repo_plan = plan_repo(request(failures=[failed("show_1", ErrorCode.INVALID_ARGUMENT)]))

    assert repo_plan.node_ids() == ["log", "show_0", "show_2", "diff", "report"]
    assert ("commits", "show_1") not in bound(the(repo_plan, "report"))


def test_a_failed_log_is_not_planned_around() -> None:
    with pytest.raises(PlanningError, match="log"):
        plan_repo(request(failures=[failed("log", ErrorCode.INVALID_ARGUMENT)]))


def test_a_failed_report_check_is_not_planned_around() -> None:
    failure = FailureContext(code="VERIFICATION_FAILED", message="cites 9f9f9f9f9f")

    with pytest.raises(PlanningError, match="9f9f9f9f9f"):
        plan_repo(request(failures=[failure]))


# --- render_report ---------------------------------------------------------------------------


def test_a_topic_lists_only_the_commits_that_mention_it() -> None:
    draft = render_report("Why?", COMMITS, "scheduler", {}, None)

    assert "1 of the last 2 commits touch 'scheduler'" in draft
    assert f"`{SECOND[:10]}` scheduler: second" in draft
    assert "Why: Run ready nodes in parallel." in draft
    assert FIRST[:10] not in draft


def test_a_commit_whose_patch_touches_the_topic_is_listed_with_its_files() -> None:
    commits = [
        Commit(sha=SECOND, author="T", date="d", message="tidy up"),
        Commit(sha=FIRST, author="U", date="d", message="docs: readme"),
    ]

    draft = render_report("Why?", commits, "scheduler", {SECOND: SHOW}, None)

    assert f"`{SECOND[:10]}` tidy up" in draft
    assert "Files: harness/scheduler.py" in draft
    assert FIRST[:10] not in draft


def test_a_topic_no_commit_mentions_is_said_and_every_commit_is_listed() -> None:
    draft = render_report("Why?", COMMITS, "payments", {}, None)

    assert "None of the last 2 commits mentions 'payments'" in draft
    assert SECOND[:10] in draft
    assert FIRST[:10] in draft


def test_without_commits_the_draft_says_there_is_nothing_to_report() -> None:
    draft = render_report("Why?", [], "scheduler", {}, None)

    assert "no commits" in draft


def test_the_files_of_the_diff_are_listed_once_each() -> None:
    draft = render_report("Why?", COMMITS, None, {}, PATCH)

    assert "What the last 2 commits changed." in draft
    assert "## Files changed since then, working tree included (3)" in draft
    assert "harness/dag.py, old_name.py, new_file.py" in draft


def test_an_id_invented_in_the_report_is_refused_though_the_report_is_among_the_results() -> None:
    invented = "b" * 40
    report = f"`{invented}` changed the scheduler."
    problems = check(report, {"log": LOG, "report": report})
    assert any(invented in problem for problem in problems)


def test_a_question_that_starts_with_a_write_word_is_planned() -> None:
    plan = plan_repo(request("Commit history of the scheduler in the last 5 commits?"))
    assert plan.nodes[0].id == "log"


def test_a_write_goal_stays_refused_whatever_the_answers_after_it_say() -> None:
    with pytest.raises(PlanningError, match="never changes the repository"):
        plan_repo(request("commit my changes\nAnswer: is that all?"))


def test_a_failed_call_of_another_plan_under_the_same_node_id_drops_nothing() -> None:
    other = FailureContext(
        node_id="diff", tool="git_diff", arguments={"target": "no-such-branch"},
        code=ErrorCode.INVALID_ARGUMENT, message="Ref 'no-such-branch' did not resolve",
    )  # fmt: skip
    assert "diff" in [n.id for n in plan_repo(request(failures=[other])).nodes]


def test_a_node_the_validator_refused_is_left_out_of_the_next_plan() -> None:
    first = plan_repo(request())
    refused = FailureContext(
        node_id="diff", code=ErrorCode.INVALID_ARGUMENT, message="argument 'target' of git_diff"
    )  # the validator names the node of the previous plan, not the call
    again = plan_repo(
        PlanningInput(
            goal=GOAL, catalog=repo_catalog(), attempt=2, failures=[refused], previous_plan=first
        )
    )
    assert "diff" not in [node.id for node in again.nodes]
