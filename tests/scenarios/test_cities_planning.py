"""The cities scenario's offline planner (requested_cities, plan_cities) and its report check."""

from __future__ import annotations

import pytest

from harness.core.errors import ErrorCode, FailureContext
from harness.core.plan import ArgumentKind, Plan
from harness.engine.validation import validate_plan
from scenarios.base import CheckInput, PlanningError
from scenarios.cities.check import check_cities_report
from scenarios.cities.planning import plan_cities, requested_cities
from tests.factories import cities_catalog, cities_request


def missing_city(city: str, tool: str = "get_population") -> FailureContext:
    return FailureContext(
        node_id=f"pop_{city.lower()}",
        tool=tool,
        arguments={"city": city},
        code=ErrorCode.MISSING_INFO,
        message=f"no data for a city called '{city}'",
    )


def bound_cities(cities_plan: Plan) -> list[str]:
    """The `city` literal of every get_population node, in plan order."""
    return [
        str(binding.value)
        for n in cities_plan.nodes
        if n.tool == "get_population"
        for binding in n.arguments
        if binding.name == "city"
    ]


# --- requested_cities ------------------------------------------------------------------------


def test_requested_cities_are_returned_in_the_order_of_the_goal() -> None:
    assert requested_cities("Compare Paris, Tokyo and New York") == ["Paris", "Tokyo", "New York"]


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        ("Compare NYC and Paris", ["New York", "Paris"]),
        ("Compare New York City, Bombay and Peking", ["New York", "Mumbai", "Beijing"]),
        ("compare paris and tokyo", ["Paris", "Tokyo"]),
    ],
)
def test_aliases_and_any_case_resolve_to_canonical_names(goal: str, expected: list[str]) -> None:
    assert requested_cities(goal) == expected


def test_a_city_named_twice_under_different_names_is_requested_once() -> None:
    assert sorted(requested_cities("Compare NYC, Paris and New York")) == ["New York", "Paris"]


def test_a_city_named_twice_is_placed_at_its_first_mention() -> None:
    # BUG (scenarios/cities/planning.py, requested_cities): names are matched longest first and
    # `found.setdefault` keeps the first *match*, not the earliest *position*; "New York" (later
    # in the goal) is matched before "NYC", so New York is ordered after Paris.
    assert requested_cities("Compare NYC, Paris and New York") == ["New York", "Paris"]


def test_an_unknown_name_in_a_list_is_kept_in_its_place() -> None:
    assert requested_cities("Compare Paris, Atlantis and Tokyo") == ["Paris", "Atlantis", "Tokyo"]


def test_the_list_ends_before_the_comparison_criteria() -> None:
    goal = "Compare Paris, Tokyo and New York on Population and Timezone"

    assert requested_cities(goal) == ["Paris", "Tokyo", "New York"]


def test_a_known_city_outside_a_list_is_still_found() -> None:
    assert requested_cities("What time is it in Tokyo?") == ["Tokyo"]


# --- plan_cities ---------------------------------------------------------------------------


def test_three_cities_give_nine_independent_lookups_and_one_report_on_all_of_them() -> None:
    cities_plan = plan_cities(cities_request("Compare Paris, Tokyo and New York"))

    assert len(cities_plan.nodes) == 10
    lookups = [n for n in cities_plan.nodes if not n.deps]
    assert len(lookups) == 9
    report = cities_plan.nodes[-1]
    assert report.id == "report"
    assert report.tool == "aggregate_report"
    assert sorted(report.deps) == sorted(n.id for n in lookups)
    assert {n.tool for n in lookups} == {"get_population", "get_timezone", "summarize_city"}
    assert bound_cities(cities_plan) == ["Paris", "Tokyo", "New York"]


def test_the_report_reads_every_lookup_result_into_the_matching_argument() -> None:
    cities_plan = plan_cities(cities_request("Compare Paris and New York"))
    report = cities_plan.nodes[-1]
    tool_of = {n.id: n.tool for n in cities_plan.nodes}
    argument_for_tool = {
        "get_population": "populations",
        "get_timezone": "timezones",
        "summarize_city": "summaries",
    }

    for binding in report.arguments:
        assert binding.kind is ArgumentKind.NODE_RESULT
        assert binding.node_id is not None
        assert binding.name == argument_for_tool[tool_of[binding.node_id]]
    assert {b.node_id for b in report.arguments} == set(report.deps)
    assert "pop_new_york" in report.deps


def test_a_missing_info_failure_drops_the_city_and_reports_it_as_missing() -> None:
    request = cities_request("Compare Paris, Atlantis and Tokyo", [missing_city("Atlantis")])

    cities_plan = plan_cities(request)

    assert bound_cities(cities_plan) == ["Paris", "Tokyo"]
    assert len(cities_plan.nodes) == 7
    report = cities_plan.nodes[-1]
    missing = [b for b in report.arguments if b.name == "missing_cities"]
    assert len(missing) == 1
    assert missing[0].kind is ArgumentKind.LITERAL
    assert missing[0].value == ["Atlantis"]
    assert validate_plan(cities_plan, cities_catalog()) == []


def test_failures_other_than_missing_info_do_not_drop_a_city() -> None:
    timeout = FailureContext(
        node_id="pop_paris",
        tool="get_population",
        arguments={"city": "Paris"},
        code=ErrorCode.TIMEOUT,
        message="timed out",
    )

    cities_plan = plan_cities(cities_request("Compare Paris and Tokyo", [timeout]))

    assert bound_cities(cities_plan) == ["Paris", "Tokyo"]
    assert all(b.name != "missing_cities" for b in cities_plan.nodes[-1].arguments)


def test_a_goal_without_a_city_cannot_be_planned() -> None:
    with pytest.raises(PlanningError, match="names no city"):
        plan_cities(cities_request("Tell me something interesting"))


def test_a_goal_whose_only_city_is_missing_cannot_be_planned() -> None:
    with pytest.raises(PlanningError):
        plan_cities(cities_request("Compare Atlantis", [missing_city("Atlantis")]))


def test_unknown_cities_with_non_latin_names_get_distinct_node_ids() -> None:
    # BUG (scenarios/cities/planning.py, _slug): a name with no ASCII letters slugs to "city", so
    # two such names give the same ids (pop_city, tz_city, sum_city) and the offline plan fails
    # validation with DUPLICATE_NODE_ID instead of running and reporting them as missing.
    cities_plan = plan_cities(cities_request("Compare Москва, Київ and Paris"))

    assert validate_plan(cities_plan, cities_catalog()) == []


# --- check_cities_report ---------------------------------------------------------------------


def check(goal: str, report: str) -> list[str]:
    return check_cities_report(CheckInput(goal=goal, report=report, results={}))


def test_a_report_mentioning_every_requested_city_passes() -> None:
    report = "# City comparison: Paris, Tokyo, New York\n..."

    assert check("Compare Paris, Tokyo and New York", report) == []


def test_a_report_missing_a_city_names_it() -> None:
    problems = check("Compare Paris, Tokyo and New York", "Paris is smaller than New York.")

    assert problems == ["the report does not mention Tokyo"]


def test_the_check_is_case_insensitive_and_uses_canonical_names_for_aliases() -> None:
    assert check("Compare NYC and Paris", "new york and PARIS") == []
    assert check("Compare NYC and Paris", "NYC and Paris") == [
        "the report does not mention New York"
    ]


def test_unknown_cities_need_not_appear_in_the_report() -> None:
    assert check("Compare Paris, Atlantis and Tokyo", "Paris and Tokyo") == []


def test_a_goal_with_no_known_city_fails_the_check() -> None:
    assert check("Compare Atlantis and El Dorado", "Atlantis and El Dorado") == [
        "none of the cities named in the goal is in the data"
    ]
