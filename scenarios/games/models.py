"""What the games tools return, step by step: each model adds what its step learned."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field, JsonValue, ValidationError

from scenarios.games.data import GameFacts, Genre, Store


class GamePrices(BaseModel):
    name: str
    offers: dict[Store, float] = Field(description="Price in US$ per store that sells the game.")
    catalog_price: float = Field(description="The lowest of the offers.")


class GameReview(BaseModel):
    name: str
    score: int = Field(description="Percent of positive user reviews.")
    count: int


class GenreReviews(BaseModel):
    genre: Genre
    average_score: float
    games: list[GameReview]


class Rejection(BaseModel):
    name: str
    reasons: list[str]


class Match(GameFacts):
    fits: list[str] = Field(description="The preferences the game meets, in words.")


class FilterResult(BaseModel):
    matches: list[Match] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)


class PricedGame(Match):
    offers: dict[Store, float]
    catalog_price: float


class PricingResult(BaseModel):
    priced: list[PricedGame] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)


class RankedGame(PricedGame):
    review_score: int | None = None
    review_count: int | None = None


class RankedGames(BaseModel):
    ranked: list[RankedGame]
    considered: int = Field(description="How many priced games were ranked.")


def ranked_games_in(results: Mapping[str, JsonValue]) -> list[RankedGame]:
    """The ranked games among a run's node results, whatever the nodes were called."""
    games: list[RankedGame] = []
    for value in results.values():
        if not isinstance(value, dict) or "ranked" not in value:
            continue
        try:
            games += RankedGames.model_validate(value).ranked
        except ValidationError:
            continue
    return games
