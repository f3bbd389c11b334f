"""Reference data for the games scenario: a catalog of real games, genre facts, reviews, prices.

Demo data, not a live source. Review scores are the share of positive user reviews and counts
are rounded, both approximating the Steam store pages. Prices are list prices in US dollars per
store; a few store-specific discounts are made up so that the price rule below matters.

The catalog price of a game is its lowest price across the stores that sell it. A recommendation
must quote exactly that price.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel


class Genre(StrEnum):
    ADVENTURE = "adventure"
    PUZZLE = "puzzle"
    SIMULATION = "simulation"
    RPG = "rpg"
    STRATEGY = "strategy"
    ROGUELIKE = "roguelike"
    PLATFORMER = "platformer"
    ACTION = "action"
    CARD = "card"
    CITY_BUILDER = "city-builder"
    SANDBOX = "sandbox"


class Pacing(StrEnum):
    RELAXED = "relaxed"
    MODERATE = "moderate"
    INTENSE = "intense"


class Difficulty(StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class Tag(StrEnum):
    STORY = "story"
    TACTICAL = "tactical"
    RELAXING = "relaxing"
    LOW_STRESS = "low-stress"
    COZY = "cozy"
    EXPLORATION = "exploration"
    MYSTERY = "mystery"
    CO_OP = "co-op"
    CREATIVE = "creative"


class Store(StrEnum):
    STEAM = "Steam"
    GOG = "GOG"
    EPIC = "Epic Games Store"
    HUMBLE = "Humble Store"


class GameFacts(BaseModel):
    """What a game is like to play: what `get_games` returns and preferences are held to."""

    name: str
    genres: list[Genre]
    session_minutes: int  # a typical play session, not the length of the game
    difficulty: Difficulty
    pacing: Pacing
    tags: list[Tag]


class GameRecord(GameFacts):
    review_score: int  # percent of positive user reviews
    review_count: int
    prices_cents: dict[Store, int]  # list price per store, in US cents
    aliases: list[str] = []

    @property
    def catalog_price_cents(self) -> int:
        """The catalog price: the lowest price across the stores that sell the game."""
        return min(self.prices_cents.values())


class GenreFact(BaseModel):
    genre: Genre
    description: str
    typical_session_minutes: int
    appeal: str


G, P, D, T, S = Genre, Pacing, Difficulty, Tag, Store
_ALL_STORES = (S.STEAM, S.GOG, S.EPIC, S.HUMBLE)


def _prices(cents: int, *stores: Store, **deals: int) -> dict[Store, int]:
    """The same list price in `stores`; `deals` maps a store's attribute name to another price."""
    prices = dict.fromkeys(stores, cents)
    prices.update({S[key]: price for key, price in deals.items()})
    return prices


GAMES: tuple[GameRecord, ...] = (
    GameRecord(
        name="Outer Wilds",
        genres=[G.ADVENTURE, G.PUZZLE],
        session_minutes=60,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.STORY, T.EXPLORATION, T.MYSTERY],
        review_score=95,
        review_count=70_000,
        prices_cents=_prices(2499, S.STEAM, S.EPIC),
    ),
    GameRecord(
        name="Stardew Valley",
        genres=[G.SIMULATION, G.RPG],
        session_minutes=30,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.RELAXING, T.LOW_STRESS, T.COZY, T.CO_OP],
        review_score=98,
        review_count=600_000,
        prices_cents=_prices(1499, S.STEAM, S.GOG, S.HUMBLE),
        aliases=["Stardew"],
    ),
    GameRecord(
        name="Baldur's Gate 3",
        genres=[G.RPG, G.STRATEGY],
        session_minutes=120,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.STORY, T.TACTICAL, T.CO_OP],
        review_score=96,
        review_count=650_000,
        prices_cents=_prices(5999, S.STEAM, S.GOG),
        aliases=["BG3", "Baldurs Gate 3"],
    ),
    GameRecord(
        name="Civilization VI",
        genres=[G.STRATEGY],
        session_minutes=120,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.TACTICAL],
        review_score=85,
        review_count=200_000,
        prices_cents=_prices(5999, S.STEAM, S.EPIC, S.HUMBLE),
        aliases=["Civ VI", "Civ 6", "Civilization 6"],
    ),
    GameRecord(
        name="Hades",
        genres=[G.ROGUELIKE, G.ACTION],
        session_minutes=40,
        difficulty=D.HARD,
        pacing=P.INTENSE,
        tags=[T.STORY],
        review_score=98,
        review_count=260_000,
        prices_cents=_prices(2499, S.STEAM, S.EPIC, S.HUMBLE),
    ),
    GameRecord(
        name="Celeste",
        genres=[G.PLATFORMER],
        session_minutes=30,
        difficulty=D.HARD,
        pacing=P.INTENSE,
        tags=[T.STORY],
        review_score=97,
        review_count=90_000,
        prices_cents=_prices(1999, S.STEAM, S.EPIC, S.HUMBLE),
    ),
    GameRecord(
        name="Into the Breach",
        genres=[G.STRATEGY, G.ROGUELIKE],
        session_minutes=30,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.TACTICAL],
        review_score=94,
        review_count=30_000,
        prices_cents=_prices(1499, S.STEAM, S.GOG, S.EPIC),
    ),
    GameRecord(
        name="Slay the Spire",
        genres=[G.CARD, G.ROGUELIKE, G.STRATEGY],
        session_minutes=45,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.TACTICAL],
        review_score=97,
        review_count=130_000,
        prices_cents=_prices(2499, S.STEAM, S.GOG, S.HUMBLE),
    ),
    GameRecord(
        name="Spiritfarer",
        genres=[G.SIMULATION, G.ADVENTURE],
        session_minutes=45,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.STORY, T.RELAXING, T.LOW_STRESS, T.COZY, T.CO_OP],
        review_score=93,
        review_count=40_000,
        prices_cents=_prices(2999, *_ALL_STORES),
    ),
    GameRecord(
        name="A Short Hike",
        genres=[G.ADVENTURE],
        session_minutes=30,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.RELAXING, T.LOW_STRESS, T.COZY, T.EXPLORATION],
        review_score=97,
        review_count=20_000,
        prices_cents=_prices(799, S.STEAM, S.EPIC, S.HUMBLE),
    ),
    GameRecord(
        name="Unpacking",
        genres=[G.PUZZLE, G.SIMULATION],
        session_minutes=20,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.STORY, T.RELAXING, T.LOW_STRESS, T.COZY],
        review_score=96,
        review_count=25_000,
        prices_cents=_prices(1999, S.STEAM, S.GOG, S.HUMBLE),
    ),
    GameRecord(
        name="Firewatch",
        genres=[G.ADVENTURE],
        session_minutes=60,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.STORY, T.EXPLORATION, T.MYSTERY],
        review_score=87,
        review_count=110_000,
        prices_cents=_prices(1999, S.STEAM, S.GOG, S.HUMBLE),
    ),
    GameRecord(
        name="What Remains of Edith Finch",
        genres=[G.ADVENTURE],
        session_minutes=45,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.STORY, T.EXPLORATION],
        review_score=95,
        review_count=40_000,
        prices_cents=_prices(1999, S.STEAM, S.EPIC, S.HUMBLE),
        aliases=["Edith Finch"],
    ),
    GameRecord(
        name="Gris",
        genres=[G.PLATFORMER, G.ADVENTURE],
        session_minutes=30,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.STORY, T.RELAXING, T.LOW_STRESS],
        review_score=95,
        review_count=25_000,
        prices_cents=_prices(1699, S.STEAM, S.GOG, S.HUMBLE),
    ),
    GameRecord(
        name="Journey",
        genres=[G.ADVENTURE],
        session_minutes=30,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.RELAXING, T.LOW_STRESS, T.EXPLORATION],
        review_score=93,
        review_count=15_000,
        prices_cents=_prices(1499, S.STEAM, S.EPIC),
    ),
    GameRecord(
        name="Night in the Woods",
        genres=[G.ADVENTURE, G.PLATFORMER],
        session_minutes=45,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.STORY, T.LOW_STRESS],
        review_score=93,
        review_count=15_000,
        prices_cents=_prices(1999, S.STEAM, S.GOG, S.HUMBLE),
    ),
    GameRecord(
        name="Coffee Talk",
        genres=[G.SIMULATION],
        session_minutes=30,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.STORY, T.RELAXING, T.LOW_STRESS, T.COZY],
        review_score=94,
        review_count=10_000,
        prices_cents=_prices(1299, S.STEAM, S.GOG, S.HUMBLE, HUMBLE=1099),
    ),
    GameRecord(
        name="Dorfromantik",
        genres=[G.PUZZLE, G.STRATEGY, G.CITY_BUILDER],
        session_minutes=30,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.RELAXING, T.LOW_STRESS, T.COZY],
        review_score=94,
        review_count=20_000,
        prices_cents=_prices(1499, S.STEAM, S.GOG),
    ),
    GameRecord(
        name="Hollow Knight",
        genres=[G.PLATFORMER, G.ACTION],
        session_minutes=60,
        difficulty=D.HARD,
        pacing=P.INTENSE,
        tags=[T.EXPLORATION, T.MYSTERY],
        review_score=96,
        review_count=300_000,
        prices_cents=_prices(1499, S.STEAM, S.GOG, S.HUMBLE),
    ),
    GameRecord(
        name="Disco Elysium",
        genres=[G.RPG],
        session_minutes=90,
        difficulty=D.MEDIUM,
        pacing=P.RELAXED,
        tags=[T.STORY, T.MYSTERY],
        review_score=92,
        review_count=90_000,
        prices_cents=_prices(3999, S.STEAM, S.GOG, S.EPIC, GOG=2999),
    ),
    GameRecord(
        name="XCOM 2",
        genres=[G.STRATEGY],
        session_minutes=90,
        difficulty=D.HARD,
        pacing=P.MODERATE,
        tags=[T.TACTICAL],
        review_score=86,
        review_count=80_000,
        prices_cents=_prices(5999, S.STEAM, S.EPIC, S.HUMBLE),
    ),
    GameRecord(
        name="Divinity: Original Sin 2",
        genres=[G.RPG, G.STRATEGY],
        session_minutes=120,
        difficulty=D.HARD,
        pacing=P.MODERATE,
        tags=[T.STORY, T.TACTICAL, T.CO_OP],
        review_score=93,
        review_count=150_000,
        prices_cents=_prices(4499, S.STEAM, S.GOG),
        aliases=["Divinity Original Sin 2", "DOS2"],
    ),
    GameRecord(
        name="Portal 2",
        genres=[G.PUZZLE],
        session_minutes=45,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.STORY, T.CO_OP],
        review_score=98,
        review_count=400_000,
        prices_cents=_prices(999, S.STEAM),
    ),
    GameRecord(
        name="Return of the Obra Dinn",
        genres=[G.PUZZLE, G.ADVENTURE],
        session_minutes=60,
        difficulty=D.MEDIUM,
        pacing=P.RELAXED,
        tags=[T.STORY, T.MYSTERY],
        review_score=95,
        review_count=30_000,
        prices_cents=_prices(1999, S.STEAM, S.GOG, S.HUMBLE),
        aliases=["Obra Dinn"],
    ),
    GameRecord(
        name="Inscryption",
        genres=[G.CARD, G.ROGUELIKE, G.PUZZLE],
        session_minutes=60,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.STORY, T.TACTICAL, T.MYSTERY],
        review_score=95,
        review_count=80_000,
        prices_cents=_prices(1999, S.STEAM, S.GOG, S.HUMBLE),
    ),
    GameRecord(
        name="Factorio",
        genres=[G.STRATEGY, G.SIMULATION, G.SANDBOX],
        session_minutes=120,
        difficulty=D.HARD,
        pacing=P.MODERATE,
        tags=[T.CREATIVE, T.CO_OP],
        review_score=97,
        review_count=170_000,
        prices_cents=_prices(3500, S.STEAM, S.GOG),
    ),
    GameRecord(
        name="Cities: Skylines",
        genres=[G.CITY_BUILDER, G.SIMULATION],
        session_minutes=90,
        difficulty=D.EASY,
        pacing=P.RELAXED,
        tags=[T.RELAXING, T.CREATIVE],
        review_score=93,
        review_count=230_000,
        prices_cents=_prices(2999, S.STEAM, S.EPIC, S.HUMBLE),
        aliases=["Cities Skylines"],
    ),
    GameRecord(
        name="Loop Hero",
        genres=[G.ROGUELIKE, G.STRATEGY, G.CARD],
        session_minutes=45,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.TACTICAL],
        review_score=88,
        review_count=40_000,
        prices_cents=_prices(1499, S.STEAM, S.GOG, S.EPIC),
    ),
    GameRecord(
        name="FTL: Faster Than Light",
        genres=[G.STRATEGY, G.ROGUELIKE],
        session_minutes=30,
        difficulty=D.HARD,
        pacing=P.MODERATE,
        tags=[T.TACTICAL],
        review_score=95,
        review_count=90_000,
        prices_cents=_prices(999, S.STEAM, S.GOG, S.HUMBLE),
        aliases=["FTL", "Faster Than Light"],
    ),
    GameRecord(
        name="Terraria",
        genres=[G.SANDBOX, G.ACTION, G.ADVENTURE],
        session_minutes=60,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.EXPLORATION, T.CREATIVE, T.CO_OP],
        review_score=97,
        review_count=1_000_000,
        prices_cents=_prices(999, S.STEAM, S.GOG, S.HUMBLE),
    ),
    GameRecord(
        name="Papers, Please",
        genres=[G.PUZZLE, G.SIMULATION],
        session_minutes=30,
        difficulty=D.MEDIUM,
        pacing=P.MODERATE,
        tags=[T.STORY],
        review_score=97,
        review_count=70_000,
        prices_cents=_prices(999, S.STEAM, S.GOG, S.HUMBLE),
    ),
)

GENRE_FACTS: dict[Genre, GenreFact] = {
    fact.genre: fact
    for fact in (
        GenreFact(
            genre=G.ADVENTURE,
            description="Exploration and story first: walk, look, talk and uncover what happened.",
            typical_session_minutes=45,
            appeal="a story you move through at your own pace",
        ),
        GenreFact(
            genre=G.PUZZLE,
            description="Progress comes from working out a rule or a solution, not from reflexes.",
            typical_session_minutes=30,
            appeal="the moment a solution clicks",
        ),
        GenreFact(
            genre=G.SIMULATION,
            description="Tend a farm, a shop or a boat: small routines that add up over days.",
            typical_session_minutes=30,
            appeal="calm routines with visible progress",
        ),
        GenreFact(
            genre=G.RPG,
            description="Build a character and a party whose choices shape a long story.",
            typical_session_minutes=90,
            appeal="choices that matter in a long story",
        ),
        GenreFact(
            genre=G.STRATEGY,
            description="Plan turns or moves ahead; good decisions beat fast hands.",
            typical_session_minutes=60,
            appeal="outthinking a system or an opponent",
        ),
        GenreFact(
            genre=G.ROGUELIKE,
            description="Short runs that start over on failure, with something kept between runs.",
            typical_session_minutes=40,
            appeal="one more run, each a little different",
        ),
        GenreFact(
            genre=G.PLATFORMER,
            description="Run and jump through hand-built levels; precision matters.",
            typical_session_minutes=30,
            appeal="mastering movement",
        ),
        GenreFact(
            genre=G.ACTION,
            description="Real-time combat where timing and reflexes decide.",
            typical_session_minutes=45,
            appeal="fast, skilful fights",
        ),
        GenreFact(
            genre=G.CARD,
            description="Build a deck and play it well; each draw is a small tactical puzzle.",
            typical_session_minutes=45,
            appeal="a deck that grows stronger as you learn it",
        ),
        GenreFact(
            genre=G.CITY_BUILDER,
            description="Lay out a town or a landscape and watch it grow.",
            typical_session_minutes=60,
            appeal="building something that works and looks good",
        ),
        GenreFact(
            genre=G.SANDBOX,
            description="Open worlds with few set goals: gather, build and set your own targets.",
            typical_session_minutes=60,
            appeal="freedom to make your own goals",
        ),
    )
}


def _build_index(games: tuple[GameRecord, ...]) -> dict[str, GameRecord]:
    """Map every lowercased name and alias to its record; reject collisions."""
    index: dict[str, GameRecord] = {}
    for game in games:
        for key in (game.name, *game.aliases):
            norm = key.strip().lower()
            existing = index.get(norm)
            if existing is not None and existing is not game:
                raise ValueError(f"{key!r} is used by both {existing.name} and {game.name}")
            index[norm] = game
    return index


_INDEX: dict[str, GameRecord] = _build_index(GAMES)


def find_game(name: str) -> GameRecord | None:
    """Case-insensitive lookup by name or alias; surrounding whitespace ignored."""
    return _INDEX.get(name.strip().lower())


def games_in(genres: list[Genre]) -> list[GameRecord]:
    """Catalog games with at least one of `genres`, in catalog order; every game when empty."""
    return [game for game in GAMES if not genres or set(game.genres) & set(genres)]


def cheapest_price_cents() -> int:
    return min(game.catalog_price_cents for game in GAMES)


def dollars(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"
