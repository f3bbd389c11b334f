"""Offline planning rules for games: four lookups in parallel, three narrowing steps, a summary.

games ─► fit ─► priced ─► ranked ─► report
prices ────────┘         │           │
reviews ─────────────────┘           │
genre_facts ─────────────────────────┘
"""

from __future__ import annotations

from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.verification import VERIFICATION_FAILED
from scenarios.base import PlanningError, PlanningInput
from scenarios.games.data import cheapest_price_cents, dollars
from scenarios.games.preferences import Preferences, parse_preferences

NO_MATCH_PROBLEM = "no game in the catalog fits"


def plan_games(request: PlanningInput) -> Plan:
    preferences = parse_preferences(request.goal)
    if preferences.is_empty():
        raise PlanningError(
            "the goal states no preference to recommend by; say what you like, e.g. 'relaxing, "
            "a good story, short sessions, under 30 dollars', or name favourite genres "
            "such as puzzle, strategy or roguelike"
        )
    budget = preferences.max_price_cents()
    if budget is not None and budget < cheapest_price_cents():
        raise PlanningError(
            f"no game in the catalog costs {dollars(budget)} or less (the cheapest costs "
            f"{dollars(cheapest_price_cents())}); raise the budget"
        )
    for failure in request.failures:
        if failure.code == VERIFICATION_FAILED and NO_MATCH_PROBLEM in failure.message:
            raise PlanningError(
                f"a new plan cannot change the catalog: {failure.message}; "
                "drop or relax a preference (pacing, session length, budget, genres) and ask again"
            )
    return _plan(preferences)


def _plan(preferences: Preferences) -> Plan:
    literal, result = ArgumentBinding.literal, ArgumentBinding.node_result
    genres = literal("genres", list(preferences.genres))
    wanted = literal("preferences", preferences.model_dump(mode="json", exclude_defaults=True))
    budget = [] if preferences.max_price is None else [literal("max_price", preferences.max_price)]
    return Plan(
        nodes=[
            PlanNode(id="games", tool="get_games", arguments=[genres]),
            PlanNode(id="prices", tool="get_prices", arguments=budget),
            PlanNode(id="reviews", tool="get_genre_reviews", arguments=[genres]),
            PlanNode(id="genre_facts", tool="get_genre_facts", arguments=[genres]),
            PlanNode(
                id="fit",
                tool="filter_games",
                arguments=[result("games", "games"), wanted],
                deps=["games"],
            ),
            PlanNode(
                id="priced",
                tool="attach_prices",
                arguments=[result("games", "fit", "matches"), result("prices", "prices")],
                deps=["fit", "prices"],
            ),
            PlanNode(
                id="ranked",
                tool="rank_games",
                arguments=[result("games", "priced", "priced"), result("reviews", "reviews")],
                deps=["priced", "reviews"],
            ),
            PlanNode(
                id="report",
                tool="summarizer",
                arguments=[
                    result("ranked", "ranked"),
                    wanted,
                    result("genre_facts", "genre_facts"),
                    result("rejected", "fit", "rejected"),
                    result("rejected", "priced", "rejected"),
                ],
                deps=["ranked", "genre_facts", "fit", "priced"],
            ),
        ]
    )
