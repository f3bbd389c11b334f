"""The games report check: every recommendation is a catalog game, at its catalog price, within
the budget, and contradicts no preference stated in the goal."""

from __future__ import annotations

import re

from scenarios.base import CheckInput, Rubric
from scenarios.games.data import GAMES, GameRecord, dollars, find_game
from scenarios.games.models import ranked_games_in
from scenarios.games.planning import NO_MATCH_PROBLEM
from scenarios.games.preferences import Preferences, contradictions, over_budget, parse_preferences
from scenarios.games.report import RECOMMENDATIONS

_ITEM = re.compile(r"^\s*\d+\.\s+\*\*(?P<name>[^*]+)\*\*(?P<rest>.*)$", re.MULTILINE)
_PRICE = re.compile(r"\$\s?(\d+(?:\.\d{1,2})?)")


def check_games_report(check: CheckInput) -> list[str]:
    preferences = parse_preferences(check.goal)
    section = _recommendations(check.report)
    if section is None:
        return [f"the report has no '{RECOMMENDATIONS}' section"]
    items = [(m.group("name").strip(), m.group("rest")) for m in _ITEM.finditer(section)]
    if not items:
        return [_why_none(preferences)]
    problems: list[str] = []
    for name, rest in items:
        game = find_game(name)
        if game is None:
            problems.append(f"the report recommends '{name}', which is not in the catalog")
            continue
        problems += _price_problems(game, rest, preferences)
        problems += [
            f"{game.name} contradicts a stated preference: {reason}"
            for reason in contradictions(game, preferences)
        ]
    return problems


def games_rubric(check: CheckInput) -> Rubric:
    """The critic looks for each ranked game's name and catalog price in the report."""
    terms = []
    for game in ranked_games_in(check.results):
        terms += [game.name, f"${game.catalog_price:.2f}"]
    return Rubric(
        criteria=[
            "recommends only games from the tool results, each with its catalog price",
            "every recommendation fits the stated preferences and budget",
            "each recommendation says why it fits",
        ],
        evidence_terms=terms,
    )


def _recommendations(report: str) -> str | None:
    if RECOMMENDATIONS not in report:
        return None
    section = report.split(RECOMMENDATIONS, 1)[1]
    return re.split(r"^## ", section, maxsplit=1, flags=re.MULTILINE)[0]


def _cents(amount: str) -> int:
    return round(float(amount) * 100)


def _price_problems(game: GameRecord, rest: str, preferences: Preferences) -> list[str]:
    amounts = [_cents(amount) for amount in _PRICE.findall(rest)]
    catalog = game.catalog_price_cents
    if not amounts:
        return [
            f"the report gives no price for {game.name}; its catalog price is {dollars(catalog)}"
        ]
    problems = []
    if amounts[0] != catalog:
        problems.append(
            f"the report gives {game.name}'s price as {dollars(amounts[0])}; its catalog price "
            f"(the lowest store price) is {dollars(catalog)}"
        )
    charged = set(game.prices_cents.values())
    problems += [
        f"the report quotes {dollars(amount)} for {game.name}, which no store charges"
        for amount in amounts[1:]
        if amount not in charged
    ]
    if (reason := over_budget(catalog, preferences)) is not None:
        problems.append(f"{game.name} is over budget: {reason}")
    return problems


def _why_none(preferences: Preferences) -> str:
    fitting = [
        game
        for game in GAMES
        if not contradictions(game, preferences)
        and over_budget(game.catalog_price_cents, preferences) is None
    ]
    if not fitting:
        wanted = ", ".join(preferences.describe())
        return f"the report recommends no game: {NO_MATCH_PROBLEM} every preference ({wanted})"
    names = ", ".join(game.name for game in fitting[:3])
    return f"the report recommends no game, although {len(fitting)} catalog games fit: {names}"
