"""What model calls cost: genai-prices' maintained table, overridable with HARNESS_PRICING_FILE.

The table is the one bundled with the locked version of genai-prices (pyproject pins it), read
from the package and never fetched: every worker prices a call the same, and a run's cost budget
never depends on a download. The operator's file adds models (a local server's, at 0 say) or
replaces prices, in USD per million tokens. Reasoning tokens are part of the output tokens the
APIs report, and are priced as output.

A model neither lists is unpriced: its calls cost 0 and their usage names it in
`unpriced_models` (cost unknown), with a warning once per model; a run with a cost limit
refuses it (`ProviderSettings.check_priced`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import genai_prices
import structlog
from genai_prices import data as bundled
from genai_prices.data_snapshot import DataSnapshot
from pydantic import BaseModel, Field, RootModel, ValidationError

from activities.llm.base import ProviderConfigError
from harness.core.problems import describe_invalid
from harness.core.usage import TokenUsage

log = structlog.get_logger()

PRICING_FILE_VARIABLE = "HARNESS_PRICING_FILE"
PER_TOKENS = 1_000_000
MAINTAINED_TABLE = f"genai-prices {genai_prices.__version__}"
_SNAPSHOT = re.compile(r"(.+)-(?:\d{8}|\d{4}-\d{2}-\d{2})")
# Built from the package's own data, not genai_prices.calc_price's snapshot: that one is
# replaced by whatever starts genai_prices.UpdatePrices in the process (pydantic-ai can).
_TABLE = DataSnapshot(providers=bundled.providers, from_auto_update=False)


class ModelPrice(BaseModel):
    """USD per million tokens. Cached reads and cache writes default to the input price."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)

    def cost(self, usage: TokenUsage) -> float:
        cached = self.input if self.cached_input is None else self.cached_input
        written = self.input if self.cache_write is None else self.cache_write
        uncached = max(usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens, 0)
        dollars = (
            uncached * self.input
            + usage.cached_tokens * cached
            + usage.cache_write_tokens * written
            + usage.output_tokens * self.output
        )
        return dollars / PER_TOKENS


class PriceList(RootModel[dict[str, ModelPrice]]):
    """The JSON of a pricing file: `{"model-name": {"input": 3, "output": 15, ...}, ...}`."""


def maintained_cost(provider: str, model: str, usage: TokenUsage) -> float | None:
    """The cost of `usage` at the bundled table's price of `model` as `provider` sells it (its
    dated snapshots included), at today's price; None when the table does not list it."""
    try:
        found, info = _TABLE.find_provider_model(model, None, provider, None)
    except LookupError:
        return None
    counts = genai_prices.Usage(
        input_tokens=usage.input_tokens,
        cache_read_tokens=usage.cached_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        output_tokens=usage.output_tokens,
    )
    try:
        price = info.calc_price(counts, found, genai_request_timestamp=datetime.now(UTC))
    except ValueError:  # a table entry that prices nothing of what was counted
        return None
    return float(price.total_price)


class PricingTable:
    """The operator's prices (`prices`), then, for a table of a hosted `provider`, the
    maintained table's."""

    def __init__(self, prices: dict[str, ModelPrice], provider: str | None = None) -> None:
        self._prices = dict(prices)
        self._provider = provider
        self._unpriced: set[str] = set()

    def prices(self) -> dict[str, ModelPrice]:
        """The operator's prices."""
        return dict(self._prices)

    def price_of(self, model: str) -> ModelPrice | None:
        """The operator's price of `model`, or of the model it is a dated snapshot of
        (`claude-haiku-4-5-20251001` as `claude-haiku-4-5`, `gpt-4.1-2025-04-14` as `gpt-4.1`)."""
        if model in self._prices:
            return self._prices[model]
        snapshot = _SNAPSHOT.fullmatch(model)
        return self._prices.get(snapshot.group(1)) if snapshot else None

    def cost(self, usage: TokenUsage, model: str) -> float | None:
        """What `usage` of `model` costs; None when neither table prices it."""
        price = self.price_of(model)
        if price is not None:
            return price.cost(usage)
        if self._provider is None:
            return None
        return maintained_cost(self._provider, model, usage)

    def knows(self, model: str) -> bool:
        return self.cost(TokenUsage(), model) is not None

    def priced(self, usage: TokenUsage, *models: str) -> TokenUsage:
        """`usage` with its cost at the price of the first of `models` a table lists (the model
        a reply names, then the one asked for); 0 and cost unknown when none is listed."""
        named = list(models[:1])
        cost = next(filter(lambda c: c is not None, (self.cost(usage, m) for m in models)), None)
        if cost is None:
            self._warn_unpriced(models[0] if models else "?")
            return usage.model_copy(
                update={"cost_usd": 0.0, "models": named, "unpriced_models": named}
            )
        return usage.model_copy(update={"cost_usd": cost, "models": named})

    def _warn_unpriced(self, model: str) -> None:
        if model not in self._unpriced:
            self._unpriced.add(model)
            log.warning("pricing.unknown_model", model=model, hint=how_to_price(model))


def how_to_price(model: str) -> str:
    return (
        f"{MAINTAINED_TABLE} does not price {model}: add it to the JSON file named by "
        f'{PRICING_FILE_VARIABLE}, e.g. {{"{model}": {{"input": 1.0, "output": 4.0}}}} '
        "(USD per million tokens; 0 for a local server)"
    )


def load_pricing(path: str | None, provider: str | None = None) -> PricingTable:
    """The maintained prices of `provider`'s models, with the models in the file at `path`
    (if any) added or replaced."""
    prices: dict[str, ModelPrice] = {}
    if path:
        try:
            listed = PriceList.model_validate_json(Path(path).read_text())
        except OSError as error:
            raise ProviderConfigError(
                f"{PRICING_FILE_VARIABLE}={path} cannot be read: {error.strerror}"
            ) from error
        except ValidationError as error:
            problem = describe_invalid(error, whole="the file", limit=1)
            raise ProviderConfigError(
                f"{PRICING_FILE_VARIABLE}={path} is not a pricing table "
                f"({problem}); expected "
                '{"model": {"input": 3.0, "output": 15.0}}, USD per million tokens'
            ) from error
        prices.update(listed.root)
    return PricingTable(prices, provider)
