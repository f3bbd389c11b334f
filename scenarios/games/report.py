"""The recommendation as markdown, from the ranked games alone (the summarizer's draft).

The layout is a contract with the report check: a '## Recommendations' section whose items start
'N. **Name** — $catalog price', followed by the store offers.
"""

from __future__ import annotations

from scenarios.games.data import GenreFact
from scenarios.games.models import RankedGame, RankedGames, Rejection
from scenarios.games.preferences import Preferences

RECOMMENDATIONS = "## Recommendations"
MAX_ALSO_CONSIDERED = 5
NO_MATCH = "No game in the catalog fits every preference."


def render_report(
    ranked: RankedGames,
    preferences: Preferences,
    genre_facts: list[GenreFact],
    rejected: list[Rejection],
) -> str:
    lines = ["# Game recommendations", ""]
    lines.append("You asked for: " + (", ".join(preferences.describe()) or "anything") + ".")
    lines += [
        "Prices are catalog prices: the lowest price across the stores that sell the game.",
        "",
        RECOMMENDATIONS,
        "",
    ]
    if not ranked.ranked:
        lines.append(NO_MATCH)
    for number, game in enumerate(ranked.ranked, start=1):
        lines += _item(number, game)
    lines += _genres(ranked.ranked, genre_facts)
    lines += _also_considered(rejected)
    return "\n".join(lines)


def _price(value: float) -> str:
    return f"${value:.2f}"


def _item(number: int, game: RankedGame) -> list[str]:
    offers = ", ".join(f"{store} {_price(price)}" for store, price in game.offers.items())
    why = "; ".join(game.fits) or "fits what you asked for"
    reviews = ""
    if game.review_score is not None and game.review_count is not None:
        reviews = f" Reviews: {game.review_score}% positive of {game.review_count:,}."
    return [
        f"{number}. **{game.name}** — {_price(game.catalog_price)} ({offers})",
        f"   Why: {why}.{reviews} Genres: {', '.join(game.genres)}.",
    ]


def _genres(games: list[RankedGame], facts: list[GenreFact]) -> list[str]:
    wanted = {genre for game in games for genre in game.genres}
    shown = [fact for fact in facts if fact.genre in wanted]
    if not shown:
        return []
    lines = ["", "## About the genres", ""]
    for fact in shown:
        lines.append(
            f"- **{fact.genre}**: {fact.description} Typical session: "
            f"{fact.typical_session_minutes} min; the appeal: {fact.appeal}."
        )
    return lines


def _also_considered(rejected: list[Rejection]) -> list[str]:
    if not rejected:
        return []
    closest = sorted(rejected, key=lambda rejection: (len(rejection.reasons), rejection.name))
    lines = ["", "## Also considered", ""]
    for rejection in closest[:MAX_ALSO_CONSIDERED]:
        lines.append(f"- {rejection.name}: " + "; ".join(rejection.reasons))
    return lines
