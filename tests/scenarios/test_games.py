"""The games scenario: preferences from the goal, the catalog and its price rule, the offline
planner, the tools' data flow, the report check, and runs end to end on the dev server."""

from __future__ import annotations

import re

import pytest
from temporalio.client import Client

from harness.core.errors import FailureContext
from harness.core.plan import ArgumentKind
from harness.engine.run import RunPhase, RunRequest
from harness.engine.validation import validate_plan
from scenarios import get_scenario
from scenarios.base import CheckInput, PlanningError
from scenarios.games.check import check_games_report
from scenarios.games.data import GAMES, GENRE_FACTS, Genre, Tag, find_game, games_in
from scenarios.games.planning import plan_games
from scenarios.games.preferences import SHORT_SESSION_MINUTES, Preferences, parse_preferences
from tests.scenarios.inprocess import judge, planning_input, run_plan, run_tool
from tests.support import activity_timeline, execute_run, history_events, node_of, running_worker

ACCEPTANCE = "I want something relaxing with a good story, short sessions, under 30 dollars"
TACTICAL = "Tactical depth in short sessions, under 20 dollars"
NO_MATCH = "I want tactical depth with relaxed pacing"
DATA_NODES = {"games", "prices", "reviews", "genre_facts"}
GAMES_SCENARIO = get_scenario("games")
_ITEM = re.compile(r"^\d+\. \*\*(?P<name>[^*]+)\*\* — \$(?P<price>\d+\.\d{2})", re.MULTILINE)


def recommended(report: str) -> list[tuple[str, float]]:
    """(name, quoted price) of each numbered recommendation, in order."""
    return [(m.group("name"), float(m.group("price"))) for m in _ITEM.finditer(report)]


def problems_for(goal: str, report: str) -> list[str]:
    return check_games_report(CheckInput(goal=goal, report=report, results={}))


def report_with(*items: str) -> str:
    return "# Game recommendations\n\n## Recommendations\n\n" + "\n".join(items)


# --- preferences -----------------------------------------------------------------------------


def test_the_acceptance_goal_asks_for_relaxed_story_games_in_short_sessions_within_30() -> None:
    assert parse_preferences(ACCEPTANCE) == Preferences(
        relaxed=True, max_session_minutes=SHORT_SESSION_MINUTES, story=True, max_price=30.0
    )


@pytest.mark.parametrize(
    ("goal", "budget"),
    [
        ("relaxing, under $30", 30.0),
        ("relaxing, $25 at most", 25.0),
        ("relaxing for 15 dollars", 15.0),
        ("relaxing, max 40 USD", 40.0),
        ("relaxing for 20 bucks", 20.0),
        ("relaxing, under 12.50 dollars", 12.5),
        ("relaxing, under $20.", 20.0),
        ("relaxing, under $19.99.", 19.99),
    ],
)
def test_a_budget_is_read_in_any_common_dollar_form(goal: str, budget: float) -> None:
    assert parse_preferences(goal).max_price == budget


@pytest.mark.parametrize(
    ("goal", "minutes"),
    [
        ("story games with short sessions", SHORT_SESSION_MINUTES),
        ("story games for quick sessions", SHORT_SESSION_MINUTES),
        ("story games, sessions under 20 minutes", 20),
        ("story games in 30-minute sessions", 30),
    ],
)
def test_session_length_is_a_stated_limit_or_short_by_default(goal: str, minutes: int) -> None:
    assert parse_preferences(goal).max_session_minutes == minutes


def test_favourite_genres_are_read_from_their_common_names() -> None:
    preferences = parse_preferences("I like roguelites, deckbuilders and role-playing games")
    assert preferences.genres == [Genre.RPG, Genre.ROGUELIKE, Genre.CARD]


def test_thirty_minutes_is_a_session_length_not_a_budget() -> None:
    preferences = parse_preferences("tactical games in 30 minute sessions")
    assert preferences.max_price is None
    assert preferences.tactical and preferences.max_session_minutes == 30


def test_low_stress_is_its_own_preference() -> None:
    assert parse_preferences("something stress-free").low_stress
    assert not parse_preferences("something relaxing").low_stress


# --- catalog -----------------------------------------------------------------------------------


def test_the_catalog_has_at_least_24_games_including_the_named_five() -> None:
    assert len(GAMES) >= 24
    for name in ("Outer Wilds", "Stardew Valley", "Baldur's Gate 3", "Civilization VI", "Hades"):
        assert find_game(name) is not None, name


def test_the_catalog_price_is_the_lowest_store_price() -> None:
    disco = find_game("Disco Elysium")
    assert disco is not None
    assert max(disco.prices_cents.values()) == 3999
    assert disco.catalog_price_cents == 2999


def test_every_genre_has_facts_and_catalog_games_and_every_game_a_store_price() -> None:
    for genre in Genre:
        assert genre in GENRE_FACTS and games_in([genre]), genre
    assert all(game.prices_cents for game in GAMES)


def test_games_are_found_by_alias_in_any_case() -> None:
    assert find_game("bg3") is find_game("Baldur's Gate 3") is not None


# --- planner ---------------------------------------------------------------------------------


def test_the_plan_runs_four_independent_lookups_then_narrows_them_down() -> None:
    plan = plan_games(planning_input("games", ACCEPTANCE))
    assert validate_plan(plan, GAMES_SCENARIO.catalog()) == []
    roots = {node.id for node in plan.nodes if not node.deps}
    assert roots == DATA_NODES
    assert [node.tool for node in plan.nodes[4:]] == [
        "filter_games",
        "attach_prices",
        "rank_games",
        "summarizer",
    ]


def test_the_plan_pushes_the_budget_down_to_the_price_lookup() -> None:
    plan = plan_games(planning_input("games", ACCEPTANCE))
    prices = plan.node("prices")
    assert prices is not None
    assert [(b.name, b.value) for b in prices.arguments] == [("max_price", 30.0)]


def test_the_summarizer_collects_rejections_from_two_steps() -> None:
    plan = plan_games(planning_input("games", ACCEPTANCE))
    report = plan.node("report")
    assert report is not None
    rejected = [b for b in report.arguments if b.name == "rejected"]
    assert [(b.kind, b.node_id, b.path) for b in rejected] == [
        (ArgumentKind.NODE_RESULT, "fit", "rejected"),
        (ArgumentKind.NODE_RESULT, "priced", "rejected"),
    ]


def test_a_goal_without_preferences_is_a_planning_error_that_says_what_to_add() -> None:
    with pytest.raises(PlanningError, match=r"states no preference.*under 30 dollars"):
        plan_games(planning_input("games", "Recommend me a game"))


def test_a_budget_below_the_cheapest_game_is_a_planning_error() -> None:
    with pytest.raises(PlanningError, match=r"costs \$2\.00 or less.*\$7\.99.*raise the budget"):
        plan_games(planning_input("games", "something relaxing under 2 dollars"))


def test_a_replan_after_no_game_fit_stops_with_advice_to_relax_a_preference() -> None:
    failure = FailureContext(
        code="VERIFICATION_FAILED",
        message="the report recommends no game: no game in the catalog fits every preference",
    )
    with pytest.raises(PlanningError, match="relax a preference"):
        plan_games(planning_input("games", NO_MATCH, [failure]))


def test_a_replan_after_another_verification_failure_plans_again() -> None:
    failure = FailureContext(code="VERIFICATION_FAILED", message="the report gives no price")
    first = plan_games(planning_input("games", ACCEPTANCE))
    assert plan_games(planning_input("games", ACCEPTANCE, [failure], first)) == first


# --- tools -----------------------------------------------------------------------------------


async def test_get_prices_with_a_budget_leaves_out_games_above_it() -> None:
    prices = await run_tool(GAMES_SCENARIO, "get_prices", {"max_price": 30})
    by_name = {price["name"]: price for price in prices}
    assert "Baldur's Gate 3" not in by_name
    assert by_name["Disco Elysium"]["catalog_price"] == 29.99
    assert by_name["Disco Elysium"]["offers"]["Steam"] == 39.99


async def test_filter_games_rejects_a_game_with_the_preference_it_contradicts() -> None:
    games = await run_tool(GAMES_SCENARIO, "get_games", {})
    result = await run_tool(
        GAMES_SCENARIO, "filter_games", {"games": games, "preferences": {"relaxed": True}}
    )
    hades = next(rejection for rejection in result["rejected"] if rejection["name"] == "Hades")
    assert hades["reasons"] == ["its pacing is intense (you asked for relaxed pacing)"]
    assert all(match["pacing"] == "relaxed" for match in result["matches"])


async def test_attach_prices_drops_matches_without_a_price_in_budget() -> None:
    games = await run_tool(GAMES_SCENARIO, "get_games", {"genres": ["rpg"]})
    prices = await run_tool(GAMES_SCENARIO, "get_prices", {"max_price": 30})
    matches = [{**game, "fits": []} for game in games]
    result = await run_tool(GAMES_SCENARIO, "attach_prices", {"games": matches, "prices": prices})
    assert [game["name"] for game in result["priced"]] == ["Stardew Valley", "Disco Elysium"]
    assert {rejection["name"] for rejection in result["rejected"]} == {
        "Baldur's Gate 3",
        "Divinity: Original Sin 2",
    }


async def test_rank_games_orders_by_review_score_then_by_lower_price() -> None:
    run = await run_plan("games", ACCEPTANCE)
    ranked = run.results["ranked"]
    assert isinstance(ranked, dict) and isinstance(ranked["ranked"], list)
    names = [game["name"] for game in ranked["ranked"] if isinstance(game, dict)]
    assert names == ["Unpacking", "Gris", "What Remains of Edith Finch"]


async def test_the_acceptance_report_passes_the_check_and_the_offline_critic() -> None:
    run = await run_plan("games", ACCEPTANCE)
    assert check_games_report(run.check_input()) == []
    assert judge("games", run).passed
    assert [name for name, _ in recommended(run.report)] == [
        "Unpacking",
        "Gris",
        "What Remains of Edith Finch",
    ]


async def test_the_rubric_asks_for_each_ranked_game_and_its_catalog_price() -> None:
    run = await run_plan("games", ACCEPTANCE)
    terms = GAMES_SCENARIO.rubric(run.check_input()).evidence_terms
    assert terms[:2] == ["Unpacking", "$19.99"]
    assert len(terms) == 6


# --- check -----------------------------------------------------------------------------------


def test_a_recommendation_outside_the_catalog_is_a_problem() -> None:
    report = report_with("1. **Hollow Knight Silksong** — $19.99")
    assert problems_for("story games", report) == [
        "the report recommends 'Hollow Knight Silksong', which is not in the catalog"
    ]


def test_a_price_other_than_the_catalog_price_is_a_problem() -> None:
    report = report_with("1. **Disco Elysium** — $39.99 (Steam $39.99)")
    assert problems_for("story games", report) == [
        "the report gives Disco Elysium's price as $39.99; its catalog price (the lowest store "
        "price) is $29.99"
    ]


def test_a_store_price_no_store_charges_is_a_problem() -> None:
    report = report_with("1. **Gris** — $16.99 (Steam $16.99, GOG $12.00)")
    assert problems_for("story games", report) == [
        "the report quotes $12.00 for Gris, which no store charges"
    ]


def test_a_recommendation_over_the_budget_is_a_problem() -> None:
    report = report_with("1. **Spiritfarer** — $29.99")
    assert problems_for("story games under 20 dollars", report) == [
        "Spiritfarer is over budget: its catalog price $29.99 is over your budget of $20.00"
    ]


def test_a_recommendation_that_contradicts_a_hard_preference_is_a_problem() -> None:
    report = report_with("1. **Hades** — $24.99")
    assert problems_for(ACCEPTANCE, report) == [
        "Hades contradicts a stated preference: its pacing is intense "
        "(you asked for relaxed pacing)"
    ]


def test_a_report_without_a_recommendations_section_is_a_problem() -> None:
    assert problems_for(ACCEPTANCE, "Try Unpacking, it costs $19.99.") == [
        "the report has no '## Recommendations' section"
    ]


def test_recommending_nothing_when_games_fit_names_games_that_do() -> None:
    problems = problems_for(ACCEPTANCE, report_with("Nothing fits."))
    assert len(problems) == 1
    assert problems[0].startswith("the report recommends no game, although 6 catalog games fit:")


def test_recommending_nothing_when_nothing_fits_says_no_game_fits() -> None:
    assert problems_for(NO_MATCH, report_with("Nothing fits.")) == [
        "the report recommends no game: no game in the catalog fits every preference "
        "(relaxed pacing, tactical depth)"
    ]


# --- end to end ------------------------------------------------------------------------------


async def test_the_acceptance_goal_recommends_catalog_games_at_catalog_prices_within_budget(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=ACCEPTANCE, scenario="games")
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None and result.verdict is not None
    assert "games.check" in result.verdict.checked_by
    picks = recommended(result.report)
    assert len(picks) == 3
    for name, price in picks:
        game = find_game(name)
        assert game is not None
        assert round(price * 100) == game.catalog_price_cents <= 3000
        assert Tag.STORY in game.tags and game.session_minutes <= SHORT_SESSION_MINUTES


async def test_the_four_lookups_are_all_scheduled_before_any_completes(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=ACCEPTANCE, scenario="games")
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    timeline = activity_timeline(await history_events(client, result.run_id))
    nodes = [(kind, node_of(summary)) for kind, summary in timeline]
    first_completion = next(
        i for i, (kind, node) in enumerate(nodes) if kind == "completed" and node in DATA_NODES
    )
    scheduled_before = {node for kind, node in nodes[:first_completion] if kind == "scheduled"}
    assert scheduled_before >= DATA_NODES


async def test_a_tactical_goal_recommends_only_tactical_games_within_its_budget(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=TACTICAL, scenario="games")
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert result.report is not None
    picks = [find_game(name) for name, _ in recommended(result.report)]
    assert picks and all(game is not None for game in picks)
    assert all(g is not None and Tag.TACTICAL in g.tags for g in picks)
    assert all(g is not None and g.catalog_price_cents <= 2000 for g in picks)


async def test_a_goal_without_preferences_fails_validation_with_the_planners_advice(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal="Recommend me a game", scenario="games", ask_user=False)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and "states no preference" in result.error


async def test_an_impossible_budget_fails_before_any_tool_runs(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal="a relaxing game for 1 dollar", scenario="games", ask_user=False)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and "raise the budget" in result.error
    assert result.counts.tool_calls == 0


async def test_preferences_no_game_meets_fail_verification_naming_them(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=NO_MATCH, scenario="games", max_replans=0)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.status is RunPhase.FAILED_VERIFICATION
    assert result.verdict is not None
    assert result.verdict.reasons == [
        "the report recommends no game: no game in the catalog fits every preference "
        "(relaxed pacing, tactical depth)"
    ]


async def test_preferences_no_game_meets_stop_after_one_replan_with_advice_to_relax_one(
    client: Client, task_queue: str
) -> None:
    request = RunRequest(goal=NO_MATCH, scenario="games", ask_user=False)
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, request)
    assert result.attempts == 2
    assert result.attempt_history[0].outcome is RunPhase.FAILED_VERIFICATION
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and "relax a preference" in result.error


@pytest.mark.parametrize(
    "goal", ["relaxing for 123456789 dollars", "relaxing, $12345678", "9" * 9_000]
)
def test_a_run_of_more_than_seven_digits_is_not_a_budget(goal: str) -> None:
    assert parse_preferences(goal).max_price is None


@pytest.mark.parametrize("word", ["cosy", "cozy", "relaxing", "laid-back"])
def test_cosy_in_either_spelling_asks_for_relaxed_pacing(word: str) -> None:
    assert parse_preferences(f"{word} simulation games under $12").relaxed
    assert not parse_preferences("coy simulation games").relaxed
