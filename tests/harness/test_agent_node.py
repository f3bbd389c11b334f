"""Agent nodes: the arguments an `agent` node takes, the rules the validator holds it to (every
problem at once, did-you-mean for a tool it lists), and the result its loop returns."""

from __future__ import annotations

from functools import cache

import pytest
from pydantic import JsonValue, ValidationError

from harness.catalog.tools import ToolCatalog
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.agent_node import (
    AGENT_TOOL,
    DEFAULT_MAX_TURNS,
    AgentArguments,
    AgentResult,
    AgentStop,
    agent_node_issues,
    agent_tool_names,
    agent_tool_spec,
)
from harness.engine.binding import resolve_arguments
from harness.engine.validation import IssueCode, ValidationIssue, validate_plan
from tests.factories import codes, lit, make_catalog, node, only, plan, ref, synthetic_catalog


@cache
def agent_catalog() -> ToolCatalog:
    """The synthetic catalog, which has the built-in `agent` tool as every pack's does."""
    catalog = synthetic_catalog()
    assert catalog.get(AGENT_TOOL) is not None
    return catalog


@cache
def catalog_without_agent() -> ToolCatalog:
    """A catalog built by hand without the shared tools (as a test or an old run's has it)."""
    base = synthetic_catalog()
    return make_catalog(
        *(tool for tool in base.tools if tool.name != AGENT_TOOL), scenario=base.scenario
    )


def agent_plan(agent: PlanNode) -> Plan:
    """`source` feeds the agent node under test, whose result the final `collect` reads."""
    return plan(
        node("source", "delay", ms=1, value="disk full on db-1"),
        agent,
        node("final", "collect", ref("inputs", agent.id), deps=[agent.id]),
    )


def scout(*bindings: ArgumentBinding, **literals: JsonValue) -> PlanNode:
    return node("scout", AGENT_TOOL, *bindings, deps=["source"], **literals)


def check(agent: PlanNode) -> list[ValidationIssue]:
    return validate_plan(agent_plan(agent), agent_catalog())


def test_a_well_formed_agent_node_has_no_issues() -> None:
    agent = scout(
        ref("context", "source"), goal="Why is db-1 slow?", tools=["delay", "echo"], max_turns=5
    )

    assert check(agent) == []


def test_without_an_agent_tool_in_the_catalog_an_agent_node_is_an_unknown_tool() -> None:
    agent = scout(goal="Why is db-1 slow?", tools=["delay"])

    issues = validate_plan(agent_plan(agent), catalog_without_agent())

    assert codes(issues) == [IssueCode.UNKNOWN_TOOL]
    assert "'agent' is not in the catalog" in issues[0].message


def test_an_agent_node_without_a_goal_reports_the_missing_goal() -> None:
    issue = only(check(scout(tools=["delay"])), IssueCode.MISSING_REQUIRED_ARGUMENT)

    assert issue.node_id == "scout"
    assert "'goal'" in issue.message


def test_an_empty_goal_is_invalid() -> None:
    issue = only(check(scout(goal="", tools=["delay"])), IssueCode.INVALID_ARGUMENT)

    assert "'goal'" in issue.message


def test_an_agent_node_without_tools_reports_them_missing() -> None:
    issue = only(check(scout(goal="look")), IssueCode.MISSING_REQUIRED_ARGUMENT)

    assert "'tools'" in issue.message


def test_an_empty_tool_list_is_invalid() -> None:
    issue = only(check(scout(goal="look", tools=[])), IssueCode.INVALID_ARGUMENT)

    assert "'tools'" in issue.message


def test_an_unknown_agent_tool_suggests_the_closest_catalog_tool() -> None:
    issue = only(check(scout(goal="look", tools=["delya"])), IssueCode.UNKNOWN_TOOL)

    assert issue.node_id == "scout"
    assert issue.message == "agent tool 'delya' is not in the catalog; did you mean 'delay'?"


def test_an_unknown_agent_tool_with_no_close_name_lists_the_tools_an_agent_may_call() -> None:
    issue = only(check(scout(goal="look", tools=["zzzzzz"])), IssueCode.UNKNOWN_TOOL)

    assert "an agent may call delay, fail" in issue.message
    assert "collect" not in issue.message
    assert "agent," not in issue.message


def test_an_agent_may_not_list_the_agent_tool() -> None:
    issue = only(check(scout(goal="look", tools=["delay", "agent"])), IssueCode.AGENT_TOOL_REFUSED)

    assert "may not call 'agent'" in issue.message


@pytest.mark.parametrize("final_tool", ["collect", "write_report"])
def test_an_agent_may_not_list_a_final_synthesis_tool(final_tool: str) -> None:
    issue = only(check(scout(goal="look", tools=[final_tool])), IssueCode.AGENT_TOOL_REFUSED)

    assert f"may not call '{final_tool}'" in issue.message
    assert "report" in issue.message


@pytest.mark.parametrize(
    ("held_tool", "why"),
    [
        ("side_effect", "not idempotent"),
        ("sleep", "a wait of the run's"),
        ("start_job", "its result comes later"),
    ],
)
def test_an_agent_may_not_list_a_tool_whose_call_waits_on_the_run(held_tool: str, why: str) -> None:
    issue = only(check(scout(goal="look", tools=[held_tool])), IssueCode.AGENT_TOOL_REFUSED)

    assert f"may not call '{held_tool}'" in issue.message and why in issue.message
    assert "plan it as a node" in issue.message


def test_tools_bound_one_name_at_a_time_are_each_checked() -> None:
    agent = scout(lit("tools", "delay"), lit("tools", "delya"), goal="look")

    issue = only(check(agent), IssueCode.UNKNOWN_TOOL)

    assert "'delya'" in issue.message


def test_tools_read_from_a_node_result_are_refused() -> None:
    agent = scout(ref("tools", "source"), goal="look")

    issue = only(check(agent), IssueCode.INVALID_ARGUMENT)

    assert "LITERAL tool names" in issue.message


@pytest.mark.parametrize("turns", [0, 51, -3])
def test_max_turns_out_of_range_is_refused(turns: int) -> None:
    issue = only(
        check(scout(goal="look", tools=["delay"], max_turns=turns)), IssueCode.INVALID_ARGUMENT
    )

    assert "'max_turns'" in issue.message


@pytest.mark.parametrize("turns", [1, 50])
def test_max_turns_at_its_bounds_is_accepted(turns: int) -> None:
    assert check(scout(goal="look", tools=["delay"], max_turns=turns)) == []


def test_a_misspelled_argument_of_an_agent_node_suggests_the_right_one() -> None:
    issue = only(check(scout(goal="look", tools=["delay"], max_turn=3)), IssueCode.UNKNOWN_ARGUMENT)

    assert "did you mean 'max_turns'?" in issue.message


def test_a_model_that_is_not_a_string_is_invalid() -> None:
    issue = only(check(scout(goal="look", tools=["delay"], model=7)), IssueCode.INVALID_ARGUMENT)

    assert "'model'" in issue.message


def test_every_problem_of_an_agent_node_is_reported_at_once() -> None:
    agent = scout(tools=["delya", "agent", "collect"], max_turns=99)

    assert sorted(codes(check(agent))) == sorted(
        [
            IssueCode.MISSING_REQUIRED_ARGUMENT,
            IssueCode.UNKNOWN_TOOL,
            IssueCode.AGENT_TOOL_REFUSED,
            IssueCode.AGENT_TOOL_REFUSED,
            IssueCode.INVALID_ARGUMENT,
        ]
    )


def test_the_agent_rules_read_the_catalogs_own_agent_entry_or_the_built_in_one() -> None:
    agent = scout(goal="look", tools=["delya"])
    without_agent = make_catalog(*synthetic_catalog().tools)

    assert codes(agent_node_issues(agent, without_agent)) == [IssueCode.UNKNOWN_TOOL]
    assert codes(agent_node_issues(agent, agent_catalog())) == [IssueCode.UNKNOWN_TOOL]


def test_repeated_context_bindings_collect_into_one_list() -> None:
    agent = scout(
        ref("context", "metrics"), ref("context", "logs"), goal="Why is db-1 slow?", tools=["echo"]
    )
    results: dict[str, JsonValue] = {"metrics": {"cpu": 0.97}, "logs": ["oom", "restart"]}

    arguments = AgentArguments.model_validate(resolve_arguments(agent, agent_tool_spec(), results))

    assert arguments.context == [{"cpu": 0.97}, "oom", "restart"]
    assert arguments.tools == ["echo"]


def test_an_agent_takes_eight_turns_and_the_runs_model_unless_told() -> None:
    arguments = AgentArguments(goal="look", tools=["delay"])

    assert arguments.max_turns == DEFAULT_MAX_TURNS == 8
    assert arguments.model is None
    assert arguments.context == []


def test_agent_arguments_refuse_what_the_validator_refuses() -> None:
    with pytest.raises(ValidationError):
        AgentArguments(goal="look", tools=[], max_turns=51)


def test_an_agent_result_says_why_its_loop_stopped_in_the_issues_words() -> None:
    result = AgentResult.model_validate(
        {
            "answer": "db-1's disk is full",
            "turns": 3,
            "tool_calls": [{"tool": "delay", "arguments": {"ms": 1}, "ok": True}],
            "stopped": "budget",
        }
    )

    assert result.stopped is AgentStop.BUDGET
    assert result.tool_calls[0].ok
    # and `waiting`, which only a session's slice ends with (an agent node waits in its loop)
    assert {stop.value for stop in AgentStop} == {"answered", "max_turns", "budget", "waiting"}
    assert AgentResult.model_validate_json(result.model_dump_json()) == result


def test_an_agent_in_a_run_bound_to_a_task_may_also_call_the_management_tools() -> None:
    catalog = agent_catalog()
    management = [tool.name for tool in catalog.tools if tool.name.startswith("harness_")]
    assert management  # every pack's catalog has them

    alone = agent_tool_names(["delay", "echo"], catalog, bound_to_task=False)
    on_a_task = agent_tool_names(["delay", "harness_fact_record"], catalog, bound_to_task=True)

    assert alone == ["delay", "echo"]
    assert on_a_task[:2] == ["delay", "harness_fact_record"]
    assert sorted(on_a_task[1:]) == sorted(management)  # each once, the listed one first
