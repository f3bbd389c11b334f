"""validate_plan: every problem of a plan is reported, each with its code, node and a message."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from harness.core.plan import Plan, PlanNode
from harness.engine.validation import IssueCode, ValidationIssue, validate_plan
from scenarios.cities.planning import plan_cities
from tests.factories import (
    cities_catalog,
    cities_request,
    codes,
    lit,
    node,
    only,
    plan,
    ref,
    synthetic_catalog,
)


def check(candidate: Plan, max_nodes: int = 1000) -> list[ValidationIssue]:
    """Validate against the synthetic catalog: delay (ms: 0..600000), fail, collect (final)."""
    return validate_plan(candidate, synthetic_catalog(), max_nodes=max_nodes)


def valid_synthetic_plan() -> Plan:
    return plan(
        node("a", "delay", ms=1),
        node("b", "delay", ms=2),
        node("out", "collect", ref("inputs", "a"), ref("inputs", "b"), deps=["a", "b"]),
    )


def test_a_well_formed_synthetic_plan_has_no_issues() -> None:
    assert check(valid_synthetic_plan()) == []


def test_the_offline_cities_plan_is_valid() -> None:
    cities_plan = plan_cities(cities_request("Compare Paris, Tokyo and New York"))

    assert validate_plan(cities_plan, cities_catalog()) == []


# --- EMPTY_PLAN, TOO_MANY_NODES, DUPLICATE_NODE_ID -------------------------------------------


def test_an_empty_plan_is_reported_as_the_only_issue() -> None:
    issues = check(Plan())

    assert codes(issues) == [IssueCode.EMPTY_PLAN]
    assert issues[0].node_id is None
    assert issues[0].message


def test_a_plan_over_the_node_limit_reports_its_size_and_the_limit() -> None:
    issue = only(check(valid_synthetic_plan(), max_nodes=2), IssueCode.TOO_MANY_NODES)

    assert issue.node_id is None
    assert "3 nodes" in issue.message
    assert "limit is 2" in issue.message


def test_a_plan_exactly_at_the_node_limit_is_accepted() -> None:
    assert check(valid_synthetic_plan(), max_nodes=3) == []


def test_a_node_id_used_twice_is_reported_once_on_that_id() -> None:
    candidate = plan(
        node("a", "delay", ms=1),
        node("a", "delay", ms=2),
        node("out", "collect", deps=["a"]),
    )

    issue = only(check(candidate), IssueCode.DUPLICATE_NODE_ID)

    assert issue.node_id == "a"
    assert "'a'" in issue.message


# --- UNKNOWN_TOOL ------------------------------------------------------------------------------


def test_unknown_tool_suggests_the_closest_name() -> None:
    candidate = plan(
        node("pop", "get_populaton", city="Paris"),
        node("report", "aggregate_report", ref("populations", "pop"), deps=["pop"]),
    )

    issue = only(validate_plan(candidate, cities_catalog()), IssueCode.UNKNOWN_TOOL)

    assert issue.node_id == "pop"
    assert "'get_populaton'" in issue.message
    assert "did you mean 'get_population'?" in issue.message


def test_unknown_tool_with_no_close_name_lists_the_available_tools() -> None:
    candidate = plan(node("w", "weather"), node("out", "collect", deps=["w"]))

    issue = only(check(candidate), IssueCode.UNKNOWN_TOOL)

    assert issue.node_id == "w"
    assert "did you mean" not in issue.message
    listed = (
        "available tools: delay, fail, flaky, write, echo, sleep, await_event, start_job, "
        "side_effect"
    )
    assert listed in issue.message


# --- arguments -----------------------------------------------------------------------------


def test_unknown_argument_suggests_the_closest_argument_name() -> None:
    candidate = plan(node("a", "delay", ms=1, msec=5), node("out", "collect", deps=["a"]))

    issue = only(check(candidate), IssueCode.UNKNOWN_ARGUMENT)

    assert issue.node_id == "a"
    assert "delay has no argument 'msec'" in issue.message
    assert "did you mean 'ms'?" in issue.message


def test_unknown_argument_with_no_close_name_lists_the_arguments_the_tool_takes() -> None:
    candidate = plan(node("a", "delay", ms=1, colour="red"), node("out", "collect", deps=["a"]))

    issue = only(check(candidate), IssueCode.UNKNOWN_ARGUMENT)

    assert "it takes ms, value" in issue.message


def test_a_non_array_argument_bound_twice_is_a_duplicate_argument() -> None:
    candidate = plan(
        node("a", "delay", lit("ms", 1), lit("ms", 2)),
        node("out", "collect", deps=["a"]),
    )

    issue = only(check(candidate), IssueCode.DUPLICATE_ARGUMENT)

    assert issue.node_id == "a"
    assert "'ms'" in issue.message


def test_an_array_argument_may_be_bound_several_times() -> None:
    candidate = plan(
        node("a", "delay", ms=1),
        node("b", "delay", ms=1),
        node(
            "out",
            "collect",
            ref("inputs", "a"),
            ref("inputs", "b"),
            lit("inputs", "extra"),
            deps=["a", "b"],
        ),
    )

    assert check(candidate) == []


def test_a_missing_required_argument_names_the_tool_and_the_argument() -> None:
    candidate = plan(node("a", "delay", value="x"), node("out", "collect", deps=["a"]))

    issue = only(check(candidate), IssueCode.MISSING_REQUIRED_ARGUMENT)

    assert issue.node_id == "a"
    assert issue.message == "delay needs argument 'ms'"


def test_a_node_result_binding_satisfies_a_required_argument() -> None:
    candidate = plan(
        node("a", "delay", ms=1),
        node("b", "delay", ref("ms", "a", "ms"), deps=["a"]),
        node("out", "collect", deps=["b"]),
    )

    assert check(candidate) == []


def test_a_literal_of_the_wrong_type_is_an_invalid_argument() -> None:
    candidate = plan(node("a", "delay", ms="fast"), node("out", "collect", deps=["a"]))

    issue = only(check(candidate), IssueCode.INVALID_ARGUMENT)

    assert issue.node_id == "a"
    assert "'ms'" in issue.message
    assert "expected integer, got string" in issue.message


def test_a_literal_below_the_minimum_is_an_invalid_argument() -> None:
    candidate = plan(node("a", "delay", ms=-1), node("out", "collect", deps=["a"]))

    issue = only(check(candidate), IssueCode.INVALID_ARGUMENT)

    assert issue.node_id == "a"
    assert "-1 is less than the minimum 0" in issue.message


def test_a_literal_outside_an_enum_is_an_invalid_argument() -> None:
    candidate = plan(node("f", "fail", code="BOGUS"), node("out", "collect", deps=["f"]))

    issue = only(check(candidate), IssueCode.INVALID_ARGUMENT)

    assert issue.node_id == "f"
    assert "'BOGUS' is not one of" in issue.message


def test_a_single_object_bound_to_an_array_argument_is_checked_as_one_item() -> None:
    incomplete_fact: dict[str, JsonValue] = {
        "city": "Paris",
        "country": "France",
        "population": 2_100_000,
    }
    candidate = plan(
        node("tz", "get_timezone", city="Paris"),
        node("sum", "summarize_city", city="Paris"),
        node(
            "report",
            "aggregate_report",
            lit("populations", incomplete_fact),
            ref("timezones", "tz"),
            ref("summaries", "sum"),
            deps=["tz", "sum"],
        ),
    )

    issue = only(validate_plan(candidate, cities_catalog()), IssueCode.INVALID_ARGUMENT)

    assert issue.node_id == "report"
    assert "'populations'" in issue.message
    assert "missing field 'year'" in issue.message


def test_a_complete_single_object_bound_to_an_array_argument_is_accepted() -> None:
    fact: dict[str, JsonValue] = {
        "city": "Paris",
        "country": "France",
        "population": 2_100_000,
        "year": 2021,
    }
    candidate = plan(
        node("tz", "get_timezone", city="Paris"),
        node("sum", "summarize_city", city="Paris"),
        node(
            "report",
            "aggregate_report",
            lit("populations", fact),
            ref("timezones", "tz"),
            ref("summaries", "sum"),
            deps=["tz", "sum"],
        ),
    )

    assert validate_plan(candidate, cities_catalog()) == []


# --- dependencies and data flow ----------------------------------------------------------


def test_a_dependency_on_a_missing_node_is_an_unknown_dependency() -> None:
    candidate = plan(node("a", "delay", ms=1, deps=["ghost"]), node("out", "collect", deps=["a"]))

    issue = only(check(candidate), IssueCode.UNKNOWN_DEPENDENCY)

    assert issue.node_id == "a"
    assert "'ghost'" in issue.message


def test_a_node_depending_on_itself_is_a_self_dependency_not_a_cycle() -> None:
    candidate = plan(node("a", "delay", ms=1, deps=["a"]), node("out", "collect", deps=["a"]))

    issues = check(candidate)

    assert codes(issues) == [IssueCode.SELF_DEPENDENCY]
    assert issues[0].node_id == "a"


def test_a_three_node_cycle_is_reported_once_naming_every_node_of_the_cycle() -> None:
    candidate = plan(
        node("a", "delay", ms=1, deps=["c"]),
        node("b", "delay", ms=1, deps=["a"]),
        node("c", "delay", ms=1, deps=["b"]),
        node("out", "collect", deps=["a", "b", "c"]),
    )

    issue = only(check(candidate), IssueCode.CYCLE)

    assert issue.node_id in {"a", "b", "c"}
    assert issue.message.startswith("dependency cycle: ")
    cycle = issue.message.removeprefix("dependency cycle: ").split(" -> ")
    assert sorted(cycle[:-1]) == ["a", "b", "c"]
    assert cycle[0] == cycle[-1]


def test_two_separate_cycles_are_each_reported() -> None:
    candidate = plan(
        node("a", "delay", ms=1, deps=["b"]),
        node("b", "delay", ms=1, deps=["a"]),
        node("c", "delay", ms=1, deps=["d"]),
        node("d", "delay", ms=1, deps=["c"]),
        node("out", "collect", deps=["a", "b", "c", "d"]),
    )

    cycles = [issue for issue in check(candidate) if issue.code is IssueCode.CYCLE]

    assert [issue.node_id for issue in cycles] == ["a", "c"]


def test_reading_the_result_of_a_missing_node_is_reported() -> None:
    candidate = plan(
        node("a", "delay", ms=1),
        node("out", "collect", ref("inputs", "ghost"), deps=["a"]),
    )

    issue = only(check(candidate), IssueCode.NODE_RESULT_UNKNOWN_NODE)

    assert issue.node_id == "out"
    assert "'ghost'" in issue.message


def test_reading_the_result_of_a_node_that_is_not_a_dependency_says_which_dep_to_add() -> None:
    candidate = plan(
        node("a", "delay", ms=1),
        node("b", "delay", ms=1),
        node("c", "delay", ref("value", "a"), ms=1, deps=["b"]),
        node("out", "collect", deps=["a", "c"]),
    )

    issue = only(check(candidate), IssueCode.NODE_RESULT_NOT_IN_DEPS)

    assert issue.node_id == "c"
    assert "add 'a' to the deps of 'c'" in issue.message


# --- the final-synthesis node ----------------------------------------------------------------


def test_a_plan_without_a_final_synthesis_node_is_reported() -> None:
    candidate = plan(node("a", "delay", ms=1))

    issue = only(check(candidate), IssueCode.FINAL_SYNTHESIS_COUNT)

    assert issue.node_id is None
    assert "collect" in issue.message
    assert "found none" in issue.message


def test_a_plan_with_two_final_synthesis_nodes_names_both() -> None:
    candidate = plan(
        node("a", "delay", ms=1),
        node("out1", "collect", deps=["a"]),
        node("out2", "collect", deps=["a"]),
    )

    issue = only(check(candidate), IssueCode.FINAL_SYNTHESIS_COUNT)

    assert "found out1, out2" in issue.message


def test_a_node_depending_on_the_final_node_means_the_final_node_is_not_last() -> None:
    candidate = plan(
        node("a", "delay", ms=1),
        node("out", "collect", deps=["a"]),
        node("after", "delay", ms=1, deps=["out"]),
    )

    issues = [i for i in check(candidate) if i.code is IssueCode.FINAL_SYNTHESIS_NOT_LAST]

    assert {issue.node_id for issue in issues} == {"out"}
    assert any("after depend on it" in issue.message for issue in issues)


def test_a_node_the_final_node_does_not_reach_is_reported() -> None:
    candidate = plan(
        node("a", "delay", ms=1),
        node("b", "delay", ms=1, deps=["a"]),
        node("stray", "delay", ms=1),
        node("out", "collect", deps=["b"]),
    )

    issue = only(check(candidate), IssueCode.FINAL_SYNTHESIS_NOT_LAST)

    assert issue.node_id == "out"
    assert "does not reach stray" in issue.message
    assert " a," not in issue.message  # 'a' is reached through 'b'


# --- several problems at once --------------------------------------------------------------


def test_every_problem_of_a_plan_is_reported_with_code_node_and_message() -> None:
    candidate = plan(
        node("a", "delay", ms="slow"),  # INVALID_ARGUMENT
        node("b", "delya", ms=1),  # UNKNOWN_TOOL
        node("c", "delay", deps=["ghost"]),  # MISSING_REQUIRED_ARGUMENT, UNKNOWN_DEPENDENCY
        node("c", "delay", ms=1, extra=1),  # DUPLICATE_NODE_ID, UNKNOWN_ARGUMENT
        node("d", "delay", ref("value", "a"), ms=1),  # NODE_RESULT_NOT_IN_DEPS
        node("out", "collect", deps=["a", "b", "c", "d"]),
        node("out2", "collect", deps=["out"]),  # FINAL_SYNTHESIS_COUNT
    )

    issues = check(candidate)

    assert {(issue.code, issue.node_id) for issue in issues} == {
        (IssueCode.DUPLICATE_NODE_ID, "c"),
        (IssueCode.INVALID_ARGUMENT, "a"),
        (IssueCode.UNKNOWN_TOOL, "b"),
        (IssueCode.MISSING_REQUIRED_ARGUMENT, "c"),
        (IssueCode.UNKNOWN_DEPENDENCY, "c"),
        (IssueCode.UNKNOWN_ARGUMENT, "c"),
        (IssueCode.NODE_RESULT_NOT_IN_DEPS, "d"),
        (IssueCode.FINAL_SYNTHESIS_COUNT, None),
    }
    assert len(issues) == 8
    assert all(issue.message for issue in issues)


@pytest.mark.parametrize(
    ("offending", "code"),
    [
        (node("x", "delya", ms=1), IssueCode.UNKNOWN_TOOL),
        (node("x", "delay", ms=1, msx=1), IssueCode.UNKNOWN_ARGUMENT),
        (node("x", "delay", lit("ms", 1), lit("ms", 1)), IssueCode.DUPLICATE_ARGUMENT),
        (node("x", "delay"), IssueCode.MISSING_REQUIRED_ARGUMENT),
        (node("x", "delay", ms=700_000), IssueCode.INVALID_ARGUMENT),
        (node("x", "delay", ms=1, deps=["nope"]), IssueCode.UNKNOWN_DEPENDENCY),
        (node("x", "delay", ms=1, deps=["x"]), IssueCode.SELF_DEPENDENCY),
        (node("x", "delay", ref("value", "nope"), ms=1), IssueCode.NODE_RESULT_UNKNOWN_NODE),
        (node("x", "delay", ref("value", "a"), ms=1), IssueCode.NODE_RESULT_NOT_IN_DEPS),
    ],
)
def test_a_node_level_issue_carries_the_id_of_the_offending_node(
    offending: PlanNode, code: IssueCode
) -> None:
    candidate = plan(
        node("a", "delay", ms=1),
        offending,
        node("out", "collect", deps=["a", "x"]),
    )

    issue = only(check(candidate), code)

    assert issue.node_id == "x"


def test_describe_shows_code_node_and_message() -> None:
    issue = ValidationIssue(code=IssueCode.CYCLE, node_id="a", message="dependency cycle: a -> a")
    plan_level = ValidationIssue(code=IssueCode.EMPTY_PLAN, message="the plan has no nodes")

    assert issue.describe() == "CYCLE a: dependency cycle: a -> a"
    assert plan_level.describe() == "EMPTY_PLAN -: the plan has no nodes"


def test_a_tool_the_contract_keeps_for_task_runs_is_refused_in_a_run_without_one() -> None:
    from harness.governance.host_contract import Contract, held_to, in_force

    contract = in_force(Contract(task_required_tools=["delay"]), [], "shop", None)
    unbound = held_to(synthetic_catalog(), contract, bound=False)
    issues = validate_plan(valid_synthetic_plan(), unbound)
    assert [(i.code, i.node_id) for i in issues] == [
        (IssueCode.TASK_REQUIRED, "a"),
        (IssueCode.TASK_REQUIRED, "b"),
    ]
    assert "start the run with --task" in issues[0].message
    assert (
        validate_plan(valid_synthetic_plan(), held_to(synthetic_catalog(), contract, bound=True))
        == []
    )
