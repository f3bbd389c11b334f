"""What the player asks for: preferences read from the goal's words, and how a game can break them.

Every preference is hard: a recommended game must not contradict any of them. The planner and the
report check read the goal with the same rules, so the check holds the report to the goal itself.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from scenarios.games.data import GameFacts, Genre, Pacing, Tag, dollars

SHORT_SESSION_MINUTES = 45

_RELAXED = re.compile(r"\b(relax\w*|chill\w*|calm\w*|co[sz]y|laid[- ]back|unwind\w*)\b", re.I)
_STORY = re.compile(r"\b(story|stories|narrative\w*|plot|story-driven)\b", re.I)
_TACTICAL = re.compile(r"\b(tactic\w*|strategic depth)\b", re.I)
_LOW_STRESS = re.compile(
    r"\b(low[- ]stress|stress[- ]free|no stress|not stressful|without stress|no pressure)\b", re.I
)
_SHORT = re.compile(
    r"\b(short|quick|brief)\s+(sessions?|bursts?|play\s*sessions?)\b|\bpick[- ]up[- ]and[- ]play\b",
    re.I,
)
_SESSION_MINUTES = re.compile(
    r"\b(?:sessions?\s+(?:of\s+|under\s+|below\s+|up\s+to\s+|at\s+most\s+)?(\d{1,3})\s*"
    r"(?:min|minutes?)|(\d{1,3})[- ]?(?:min|minute)s?\s+sessions?)\b",
    re.I,
)
_BUDGET = re.compile(
    r"\$\s?(\d{1,7}(?:\.\d{1,2})?)(?!\d|\.\d)"
    r"|(?<![\d.])(\d{1,7}(?:\.\d{1,2})?)\s?(?:\$|dollars?\b|usd\b|bucks\b)",
    re.I,
)
"""An amount starts where no digit stands before it and has at most seven digits: a long run
of digits is tried once, not from each of its digits (no quadratic backtracking)."""
_GENRE_WORDS: dict[Genre, str] = {
    Genre.ADVENTURE: r"adventures?",
    Genre.PUZZLE: r"puzzles?|puzzlers?",
    Genre.SIMULATION: r"simulations?|sims?|simulators?",
    Genre.RPG: r"rpgs?|role[- ]playing",
    Genre.STRATEGY: r"strategy|strategies",
    Genre.ROGUELIKE: r"rogue-?(?:like|lite)s?",
    Genre.PLATFORMER: r"platformers?",
    Genre.ACTION: r"action",
    Genre.CARD: r"card games?|deck-?builders?|deck-?building",
    Genre.CITY_BUILDER: r"city[- ]builders?|city[- ]building",
    Genre.SANDBOX: r"sandbox(?:es)?",
}


class Preferences(BaseModel):
    relaxed: bool = Field(default=False, description="Relaxed pacing only.")
    max_session_minutes: int | None = Field(
        default=None, ge=1, description="Longest acceptable typical session, in minutes."
    )
    story: bool = Field(default=False, description="Story-driven games only.")
    tactical: bool = Field(default=False, description="Games with tactical depth only.")
    low_stress: bool = Field(default=False, description="Low-stress games only.")
    max_price: float | None = Field(
        default=None,
        ge=0,
        description="Budget in US dollars: the catalog price must not exceed it.",
    )
    genres: list[Genre] = Field(
        default_factory=list, description="Favourite genres; a game needs at least one of them."
    )

    def is_empty(self) -> bool:
        return self == Preferences()

    def max_price_cents(self) -> int | None:
        return None if self.max_price is None else round(self.max_price * 100)

    def describe(self) -> list[str]:
        """Each preference in words, as the report and the check name it."""
        parts = []
        if self.relaxed:
            parts.append("relaxed pacing")
        if self.max_session_minutes is not None:
            parts.append(f"short sessions (up to {self.max_session_minutes} min)")
        if self.story:
            parts.append("a good story")
        if self.tactical:
            parts.append("tactical depth")
        if self.low_stress:
            parts.append("low stress")
        if self.genres:
            parts.append("favourite genres: " + ", ".join(self.genres))
        if (cents := self.max_price_cents()) is not None:
            parts.append(f"a budget of {dollars(cents)}")
        return parts


def parse_preferences(goal: str) -> Preferences:
    """The preferences stated in the goal; fields the goal does not mention stay unset."""
    return Preferences(
        relaxed=bool(_RELAXED.search(goal)),
        max_session_minutes=_session_limit(goal),
        story=bool(_STORY.search(goal)),
        tactical=bool(_TACTICAL.search(goal)),
        low_stress=bool(_LOW_STRESS.search(goal)),
        max_price=_budget(goal),
        genres=[genre for genre, words in _GENRE_WORDS.items() if _mentions(goal, words)],
    )


def _mentions(goal: str, words: str) -> bool:
    return re.search(rf"\b(?:{words})\b", goal, re.IGNORECASE) is not None


def _session_limit(goal: str) -> int | None:
    minutes = _SESSION_MINUTES.search(goal)
    if minutes:
        return int(minutes.group(1) or minutes.group(2))
    return SHORT_SESSION_MINUTES if _SHORT.search(goal) else None


def _budget(goal: str) -> float | None:
    match = _BUDGET.search(goal)
    return float(match.group(1) or match.group(2)) if match else None


def contradictions(game: GameFacts, preferences: Preferences) -> list[str]:
    """Why `game` does not fit `preferences`, one reason per broken preference (price aside)."""
    reasons = []
    if preferences.relaxed and game.pacing is not Pacing.RELAXED:
        reasons.append(f"its pacing is {game.pacing} (you asked for relaxed pacing)")
    limit = preferences.max_session_minutes
    if limit is not None and game.session_minutes > limit:
        reasons.append(f"a typical session is {game.session_minutes} min (you asked for {limit})")
    if preferences.story and Tag.STORY not in game.tags:
        reasons.append("it is not story-driven")
    if preferences.tactical and Tag.TACTICAL not in game.tags:
        reasons.append("it has no tactical depth")
    if preferences.low_stress and Tag.LOW_STRESS not in game.tags:
        reasons.append(f"it is not low-stress ({game.difficulty} difficulty, {game.pacing} pacing)")
    if preferences.genres and not set(game.genres) & set(preferences.genres):
        reasons.append(f"its genres ({', '.join(game.genres)}) are not among your favourites")
    return reasons


def over_budget(catalog_price_cents: int, preferences: Preferences) -> str | None:
    budget = preferences.max_price_cents()
    if budget is None or catalog_price_cents <= budget:
        return None
    return (
        f"its catalog price {dollars(catalog_price_cents)} is over your budget of {dollars(budget)}"
    )


def fits(game: GameFacts, preferences: Preferences) -> list[str]:
    """What about `game` matches the stated preferences, in words, for the report's reasons."""
    reasons = []
    if preferences.relaxed:
        reasons.append("relaxed pacing")
    if preferences.max_session_minutes is not None:
        reasons.append(f"sessions of about {game.session_minutes} min")
    if preferences.story:
        reasons.append("story-driven")
    if preferences.tactical:
        reasons.append("tactical depth")
    if preferences.low_stress:
        reasons.append("low stress")
    if preferences.genres:
        reasons.append(", ".join(g for g in game.genres if g in preferences.genres))
    return reasons
