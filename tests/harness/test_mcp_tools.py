"""MCP tools in the catalog (harness/catalog/mcp_tools.py): how a listed tool's annotations become
its
side-effect, retry and approval flags, how pinned arguments leave its schema, how with_servers
names tools, and that the plan validator refuses bad arguments by the MCP tool's own schema."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.catalog.mcp_tools import (
    McpListedTool,
    McpServerListing,
    McpToolAnnotations,
    ToolNameClashError,
    tool_spec,
    with_servers,
)
from harness.catalog.tools import McpTarget, ToolCatalog, ToolSpec
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.validation import IssueCode, validate_plan
from scenarios import get_scenario
from tests.factories import codes, lit, make_catalog, node, only, plan, ref

READ_ONLY = McpToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)
WRITE = McpToolAnnotations(read_only=False, destructive=False, idempotent=False, open_world=False)
IDEMPOTENT_WRITE = McpToolAnnotations(
    read_only=False, destructive=False, idempotent=True, open_world=False
)
DESTRUCTIVE = McpToolAnnotations(
    read_only=False, destructive=True, idempotent=True, open_world=False
)

REPO_PATH = {"title": "Repo Path", "type": "string"}


def git_log_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "repo_path": dict(REPO_PATH),
            "max_count": {"default": 10, "title": "Max Count", "type": "integer"},
            "start_timestamp": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["repo_path"],
    }


def git_log() -> McpListedTool:
    return McpListedTool(
        name="git_log",
        description="Shows the commit logs",
        input_schema=git_log_schema(),
        annotations=READ_ONLY,
    )


def git_reset() -> McpListedTool:
    return McpListedTool(
        name="git_reset",
        description="Unstages all staged changes",
        input_schema={
            "type": "object",
            "properties": {"repo_path": dict(REPO_PATH)},
            "required": ["repo_path"],
        },
        annotations=DESTRUCTIVE,
    )


def git_commit() -> McpListedTool:
    return McpListedTool(
        name="git_commit",
        description="Records changes to the repository",
        input_schema={
            "type": "object",
            "properties": {
                "repo_path": dict(REPO_PATH),
                "message": {"title": "Message", "type": "string"},
            },
            "required": ["repo_path", "message"],
        },
        annotations=WRITE,
    )


def git_listing(*tools: McpListedTool, prefix: str | None = None) -> McpServerListing:
    return McpServerListing(
        server="git",
        tools=list(tools) or [git_log(), git_reset(), git_commit()],
        prefix=prefix,
        pinned=["repo_path"],
    )


def builtin(name: str) -> ToolSpec:
    return ToolSpec(name=name, description=f"built-in {name}", arguments_schema={"type": "object"})


def spec_of(listed: McpListedTool, pinned: list[str] | None = None) -> ToolSpec:
    listing = McpServerListing(server="git", tools=[listed], pinned=pinned or [])
    return tool_spec(listed.name, listing, listed)


# --- annotations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "side_effects", "idempotent", "requires_approval"),
    [
        (READ_ONLY, False, False, False),
        (WRITE, True, False, False),
        (IDEMPOTENT_WRITE, True, True, False),
        (DESTRUCTIVE, True, True, True),
        (McpToolAnnotations(), True, False, True),
    ],
    ids=["read-only", "write", "idempotent-write", "destructive", "spec-defaults"],
)
def test_annotations_decide_side_effects_retries_and_approval(
    annotations: McpToolAnnotations, side_effects: bool, idempotent: bool, requires_approval: bool
) -> None:
    spec = spec_of(McpListedTool(name="t", annotations=annotations))

    assert (spec.side_effects, spec.idempotent, spec.requires_approval) == (
        side_effects,
        idempotent,
        requires_approval,
    )


def test_a_read_only_tool_has_no_side_effects_even_when_it_says_it_is_idempotent() -> None:
    spec = spec_of(git_log())

    assert not spec.side_effects
    assert not spec.idempotent


def test_a_destructive_tool_always_waits_for_approval() -> None:
    assert spec_of(git_reset()).requires_approval


def test_a_non_destructive_write_has_side_effects_but_no_forced_approval() -> None:
    spec = spec_of(git_commit())

    assert spec.side_effects
    assert not spec.requires_approval
    assert not spec.idempotent


def test_a_tool_listed_without_annotations_gets_the_spec_defaults() -> None:
    listed = McpListedTool.model_validate({"name": "mystery"})

    spec = spec_of(listed)

    assert spec.side_effects
    assert spec.requires_approval
    assert not spec.idempotent


def test_a_tool_without_a_description_is_described_by_its_name_and_server() -> None:
    spec = spec_of(McpListedTool(name="git_status", annotations=READ_ONLY))

    assert "git_status" in spec.description
    assert "git" in spec.description


# --- pinned arguments and the target ---------------------------------------------------------


def test_pinned_arguments_leave_the_properties_and_the_required_list() -> None:
    spec = spec_of(git_log(), pinned=["repo_path"])

    assert spec.argument_names() == ["max_count", "start_timestamp"]
    assert spec.required_arguments() == []


def test_pinning_does_not_change_the_listed_schema() -> None:
    listed = git_log()
    before = copy.deepcopy(listed.input_schema)

    spec_of(listed, pinned=["repo_path"])

    assert listed.input_schema == before
    assert "repo_path" in listed.input_schema["properties"]


def test_a_tool_with_nothing_pinned_keeps_its_whole_schema() -> None:
    assert spec_of(git_log()).arguments_schema == git_log_schema()


def test_an_mcp_tool_targets_its_server_and_its_own_name() -> None:
    catalog = with_servers(make_catalog(), [git_listing(git_log(), prefix="g_")])

    spec = catalog.get("g_git_log")

    assert spec is not None
    assert spec.mcp == McpTarget(server="git", tool="git_log", writes=False)


# --- with_servers naming ---------------------------------------------------------------------


def test_built_in_tools_come_first_and_server_tools_follow_in_order() -> None:
    catalog = with_servers(make_catalog(builtin("write_report")), [git_listing()])

    assert catalog.names() == ["write_report", "git_log", "git_reset", "git_commit"]
    assert catalog.get("write_report") == builtin("write_report")


def test_a_server_tool_whose_name_is_taken_is_prefixed_with_its_server() -> None:
    catalog = with_servers(make_catalog(builtin("git_log")), [git_listing(git_log())])

    assert catalog.names() == ["git_log", "git_git_log"]
    spec = catalog.get("git_git_log")
    assert spec is not None
    assert spec.mcp == McpTarget(server="git", tool="git_log", writes=False)


def test_a_clash_between_two_servers_prefixes_the_later_one() -> None:
    other = McpServerListing(server="mirror", tools=[git_log()])

    catalog = with_servers(make_catalog(), [git_listing(git_log()), other])

    assert catalog.names() == ["git_log", "mirror_git_log"]


def test_an_explicit_prefix_is_always_used() -> None:
    catalog = with_servers(make_catalog(), [git_listing(git_log(), git_commit(), prefix="repo_")])

    assert catalog.names() == ["repo_git_log", "repo_git_commit"]


def test_a_server_tool_named_with_the_reserved_prefix_is_renamed() -> None:
    listed = McpListedTool(name="harness_status", annotations=READ_ONLY)

    catalog = with_servers(make_catalog(), [git_listing(listed)])

    assert catalog.names() == ["git_harness_status"]


@pytest.mark.parametrize("reserved", ["write_report", "agent"])
def test_a_server_tool_named_like_a_built_in_tool_is_renamed(reserved: str) -> None:
    listed = McpListedTool(name=reserved, annotations=READ_ONLY)

    catalog = with_servers(make_catalog(), [git_listing(listed)])

    assert catalog.names() == [f"git_{reserved}"]


def test_a_clash_that_prefixing_cannot_resolve_names_both_tools() -> None:
    catalog = make_catalog(builtin("git_log"), builtin("git_git_log"))

    with pytest.raises(ToolNameClashError) as raised:
        with_servers(catalog, [git_listing(git_log())])

    message = str(raised.value)
    assert "'git'" in message
    assert "'git_log'" in message
    assert "'git_git_log'" in message
    assert "the scenario" in message


def test_with_servers_leaves_the_given_catalog_unchanged() -> None:
    catalog = make_catalog(builtin("write_report"))

    with_servers(catalog, [git_listing()])

    assert catalog.names() == ["write_report"]


# --- the validator refuses bad arguments by the MCP tool's schema ----------------------------


def repo_catalog() -> ToolCatalog:
    return with_servers(get_scenario("repo").catalog(), [git_listing()])


def log_then_report(*log_arguments: Any) -> Plan:
    return plan(
        node("log", "git_log", *log_arguments),
        node("report", "write_repo_report", ref("log", "log"), deps=["log"], question="Why?"),
    )


def test_a_plan_with_good_arguments_to_an_mcp_tool_is_valid() -> None:
    assert validate_plan(log_then_report(lit("max_count", 20)), repo_catalog()) == []


def test_a_wrong_typed_literal_for_an_mcp_tool_is_an_invalid_argument() -> None:
    issues = validate_plan(log_then_report(lit("max_count", "x")), repo_catalog())

    issue = only(issues, IssueCode.INVALID_ARGUMENT)
    assert issue.node_id == "log"
    assert "max_count" in issue.message
    assert codes(issues) == [IssueCode.INVALID_ARGUMENT]


def test_a_null_is_accepted_where_the_mcp_schema_allows_it() -> None:
    plan_ = log_then_report(lit("start_timestamp", None))

    assert validate_plan(plan_, repo_catalog()) == []


def test_an_argument_the_mcp_tool_does_not_take_is_unknown() -> None:
    issues = validate_plan(log_then_report(lit("author", "T")), repo_catalog())

    issue = only(issues, IssueCode.UNKNOWN_ARGUMENT)
    assert issue.node_id == "log"
    assert "author" in issue.message


def test_a_plan_may_not_set_a_pinned_argument() -> None:
    issues = validate_plan(log_then_report(lit("repo_path", "/etc")), repo_catalog())

    issue = only(issues, IssueCode.UNKNOWN_ARGUMENT)
    assert "repo_path" in issue.message
    assert codes(issues) == [IssueCode.UNKNOWN_ARGUMENT]


def test_a_missing_required_argument_of_an_mcp_tool_is_reported() -> None:
    commit = plan(
        node("commit", "git_commit"),
        node("report", "write_repo_report", deps=["commit"], question="Why?", log="none"),
    )

    issues = validate_plan(commit, repo_catalog())

    issue = only(issues, IssueCode.MISSING_REQUIRED_ARGUMENT)
    assert "message" in issue.message


def test_a_server_named_harness_cannot_give_its_tools_reserved_names() -> None:
    listing = McpServerListing(server="harness", tools=[McpListedTool(name="harness_status")])

    try:
        catalog = with_servers(make_catalog(), [listing])
    except ToolNameClashError:
        return
    assert not [name for name in catalog.names() if name.startswith("harness_")]


def test_a_schema_the_validator_cannot_read_is_made_plain_before_it_reaches_a_run() -> None:
    listed = McpListedTool(
        name="odd",
        input_schema={
            "type": "object",
            "properties": {
                "a": True,
                "b": None,
                "c": "string",
                "d": {"anyOf": [False, {"type": "integer"}]},
            },
            "required": True,
        },
        annotations=McpToolAnnotations(read_only=True),
    )
    catalog = with_servers(
        ToolCatalog(scenario="s", tools=[]), [McpServerListing(server="x", tools=[listed])]
    )
    spec = catalog.tools[0]
    assert spec.arguments_schema["properties"] == {
        "a": {}, "b": {}, "c": {}, "d": {"anyOf": [{"enum": []}, {"type": "integer"}]},
    }  # fmt: skip
    assert "required" not in spec.arguments_schema
    plan = Plan(nodes=[PlanNode(id="n", tool="odd", arguments=[ArgumentBinding.literal("d", "x")])])
    issues = validate_plan(plan, catalog)  # no crash: every problem is an issue
    assert any(issue.code is IssueCode.INVALID_ARGUMENT for issue in issues)
