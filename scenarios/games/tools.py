"""The games tools: four independent lookups, three steps that narrow them down, the summarizer.

Data flow: get_games -> filter_games -> attach_prices (+ get_prices) -> rank_games
(+ get_genre_reviews) -> summarizer (+ get_genre_facts).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.llm import TextRequest
from harness.catalog.tools import ToolRole, ToolSpec
from harness.core.untrusted import fence, with_data_rule
from scenarios.base import Tool, ToolContext, ToolFunction
from scenarios.games.data import GENRE_FACTS, GameFacts, Genre, GenreFact, games_in
from scenarios.games.models import (
    FilterResult,
    GamePrices,
    GameReview,
    GenreReviews,
    Match,
    PricedGame,
    PricingResult,
    RankedGame,
    RankedGames,
    Rejection,
)
from scenarios.games.preferences import Preferences, contradictions, fits
from scenarios.games.report import render_report

DEFAULT_LIMIT = 3


class GenresArgs(BaseModel):
    genres: list[Genre] = Field(
        default_factory=list, description="Genres to look at; every genre when empty."
    )


class PricesArgs(BaseModel):
    max_price: float | None = Field(
        default=None, ge=0, description="Only games whose catalog price (US$) is at most this."
    )


class FilterArgs(BaseModel):
    games: list[GameFacts] = Field(description="The get_games result.")
    preferences: Preferences


class AttachPricesArgs(BaseModel):
    games: list[Match] = Field(description="The 'matches' of a filter_games result.")
    prices: list[GamePrices] = Field(description="The get_prices result.")


class RankArgs(BaseModel):
    games: list[PricedGame] = Field(description="The 'priced' games of an attach_prices result.")
    reviews: list[GenreReviews] = Field(description="The get_genre_reviews result.")
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, le=10, description="How many to keep.")


class SummarizerArgs(BaseModel):
    ranked: RankedGames = Field(description="The rank_games result.")
    preferences: Preferences
    genre_facts: list[GenreFact] = Field(
        default_factory=list, description="The get_genre_facts result."
    )
    rejected: list[Rejection] = Field(
        default_factory=list,
        description="The 'rejected' of filter_games and of attach_prices; each binding adds.",
    )


async def get_games(args: GenresArgs, ctx: ToolContext) -> JsonValue:
    fields = set(GameFacts.model_fields)
    return [game.model_dump(mode="json", include=fields) for game in games_in(args.genres)]


async def get_prices(args: PricesArgs, ctx: ToolContext) -> JsonValue:
    prices = [
        GamePrices(
            name=game.name,
            offers={store: cents / 100 for store, cents in game.prices_cents.items()},
            catalog_price=game.catalog_price_cents / 100,
        )
        for game in games_in([])
        if args.max_price is None or game.catalog_price_cents <= round(args.max_price * 100)
    ]
    return [price.model_dump(mode="json") for price in prices]


async def get_genre_facts(args: GenresArgs, ctx: ToolContext) -> JsonValue:
    genres = args.genres or list(Genre)
    return [GENRE_FACTS[genre].model_dump(mode="json") for genre in genres]


async def get_genre_reviews(args: GenresArgs, ctx: ToolContext) -> JsonValue:
    summaries = []
    for genre in args.genres or list(Genre):
        games = games_in([genre])
        reviews = [
            GameReview(name=game.name, score=game.review_score, count=game.review_count)
            for game in games
        ]
        average = round(sum(review.score for review in reviews) / len(reviews), 1)
        summaries.append(GenreReviews(genre=genre, average_score=average, games=reviews))
    return [summary.model_dump(mode="json") for summary in summaries]


async def filter_games(args: FilterArgs, ctx: ToolContext) -> JsonValue:
    result = FilterResult()
    for game in args.games:
        reasons = contradictions(game, args.preferences)
        if reasons:
            result.rejected.append(Rejection(name=game.name, reasons=reasons))
        else:
            result.matches.append(Match(**game.model_dump(), fits=fits(game, args.preferences)))
    return result.model_dump(mode="json")


async def attach_prices(args: AttachPricesArgs, ctx: ToolContext) -> JsonValue:
    prices = {price.name: price for price in args.prices}
    result = PricingResult()
    for game in args.games:
        price = prices.get(game.name)
        if price is None:
            reason = "no store price within the budget"
            result.rejected.append(Rejection(name=game.name, reasons=[reason]))
        else:
            result.priced.append(
                PricedGame(
                    **game.model_dump(), offers=price.offers, catalog_price=price.catalog_price
                )
            )
    return result.model_dump(mode="json")


async def rank_games(args: RankArgs, ctx: ToolContext) -> JsonValue:
    reviews = {review.name: review for genre in args.reviews for review in genre.games}
    ranked = [
        RankedGame(
            **game.model_dump(),
            review_score=reviews[game.name].score if game.name in reviews else None,
            review_count=reviews[game.name].count if game.name in reviews else None,
        )
        for game in args.games
    ]
    ranked.sort(key=lambda game: (-(game.review_score or 0), game.catalog_price, game.name))
    return RankedGames(ranked=ranked[: args.limit], considered=len(ranked)).model_dump(mode="json")


async def summarizer(args: SummarizerArgs, ctx: ToolContext) -> JsonValue:
    reply = await ctx.write(
        TextRequest(
            system=with_data_rule(
                "You recommend video games. Use only the games and facts given. Keep the "
                "'## Recommendations' section as a numbered list, one game per item, starting "
                "'N. **Name** — $price' with the catalog price exactly as given; invent no price."
            ),
            prompt="Write a short markdown recommendation from these facts.\n\n"
            + fence("facts", args.model_dump_json(indent=2)),
            draft=render_report(args.ranked, args.preferences, args.genre_facts, args.rejected),
            max_output_tokens=1200,
        )
    )
    return reply.text.strip()


def _tool(
    name: str,
    description: str,
    arguments: type[BaseModel],
    run: ToolFunction,
    result: type[BaseModel] | None = None,
) -> Tool:
    spec = ToolSpec.from_model(name, description, arguments, cost_hint=0.1, result=result)
    return Tool(spec=spec, arguments=arguments, run=run)


TOOLS = (
    _tool(
        "get_games",
        "Catalog games in the given genres (all when empty): genres, typical session length in "
        "minutes, difficulty, pacing and tags such as story, tactical, relaxing, low-stress.",
        GenresArgs,
        get_games,
    ),
    _tool(
        "get_prices",
        "Store prices (US$) per game and its catalog price, the lowest store price. With "
        "max_price, only games whose catalog price is at most that.",
        PricesArgs,
        get_prices,
    ),
    _tool(
        "get_genre_facts",
        "What each genre is like: a description, the typical session length and its appeal.",
        GenresArgs,
        get_genre_facts,
    ),
    _tool(
        "get_genre_reviews",
        "Aggregated user review scores (percent positive, count) for the games of each genre.",
        GenresArgs,
        get_genre_reviews,
    ),
    _tool(
        "filter_games",
        "Split get_games' games into 'matches' (fit every preference, with the reasons) and "
        "'rejected' (with what each one contradicts).",
        FilterArgs,
        filter_games,
        FilterResult,
    ),
    _tool(
        "attach_prices",
        "Join filter_games' matches (path 'matches') with get_prices: 'priced' games carry "
        "their offers and catalog price; 'rejected' lists the games with no price in budget.",
        AttachPricesArgs,
        attach_prices,
        PricingResult,
    ),
    _tool(
        "rank_games",
        "Rank attach_prices' priced games (path 'priced') by review score, then price.",
        RankArgs,
        rank_games,
        RankedGames,
    ),
    Tool(
        spec=ToolSpec.from_model(
            "summarizer",
            "The final markdown recommendation: each ranked game with its catalog price, store "
            "offers and the reasons it fits; bind 'rejected' to filter_games and attach_prices "
            "(path 'rejected') to list what was left out.",
            SummarizerArgs,
            role=ToolRole.FINAL_SYNTHESIS,
            cost_hint=2.0,
            uses_llm=True,
        ),
        arguments=SummarizerArgs,
        run=summarizer,
    ),
)
