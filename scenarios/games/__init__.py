"""Scenario `games`: recommend games from a local catalog by the player's stated preferences."""

from pathlib import Path

from scenarios.base import Pack
from scenarios.games.check import check_games_report, games_rubric
from scenarios.games.data import GAMES, GENRE_FACTS
from scenarios.games.planning import plan_games
from scenarios.games.tools import TOOLS

SCENARIO = Pack(
    name="games",
    eval_cases=Path(__file__).parent / "eval_cases.yaml",
    description=f"Recommend games from a catalog of {len(GAMES)} by pacing, session length, "
    "story, tactics, stress, budget and genres, with catalog prices.",
    example_goal="I want something relaxing with a good story, short sessions, under 30 dollars",
    tools=TOOLS,
    check=check_games_report,
    offline_plan=plan_games,
    rubric=games_rubric,
    facts=tuple(
        f"{fact.genre.value} games: {fact.description} Typical session "
        f"{fact.typical_session_minutes} minutes; the appeal is {fact.appeal}."
        for fact in GENRE_FACTS.values()
    ),
)
