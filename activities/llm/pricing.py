"""What model calls cost: USD per million tokens per model, overridable with HARNESS_PRICING_FILE.

Prices are list prices for standard processing (no batch discount, no long-context surcharge);
the cost they give is an estimate of the bill, computed from the token counts the API reported.
A table of our own rather than a pricing package (litellm's, say): the run's cost budget must
be computed the same way on every worker and replay, from prices pinned in the repository and
overridden only by the operator's file, never by a download.
"""

from __future__ import annotations

import re
from pathlib import Path

import structlog
from pydantic import BaseModel, Field, RootModel, ValidationError

from activities.llm.base import ProviderConfigError
from harness.core.problems import describe_invalid
from harness.core.usage import TokenUsage

log = structlog.get_logger()

PRICING_FILE_VARIABLE = "HARNESS_PRICING_FILE"
PER_TOKENS = 1_000_000
_SNAPSHOT = re.compile(r"(.+)-(?:\d{8}|\d{4}-\d{2}-\d{2})")


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


def _price(base: float, output: float, cached: float, write: float) -> ModelPrice:
    return ModelPrice(input=base, output=output, cached_input=cached, cache_write=write)


# Anthropic: cache writes (5-minute TTL) cost 1.25x input, cache reads 0.1x.
# OpenAI: caching is automatic; writes cost the input price, reads are discounted.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "claude-opus-4-7": _price(5.0, 25.0, 0.50, 6.25),
    "claude-opus-4-6": _price(5.0, 25.0, 0.50, 6.25),
    "claude-opus-4-5": _price(5.0, 25.0, 0.50, 6.25),
    "claude-sonnet-4-6": _price(3.0, 15.0, 0.30, 3.75),
    "claude-sonnet-4-5": _price(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4-5": _price(1.0, 5.0, 0.10, 1.25),
    "gpt-5.5": _price(5.0, 30.0, 0.50, 5.0),
    "gpt-5.4": _price(2.50, 15.0, 0.25, 2.50),
    "gpt-5.4-mini": _price(0.75, 4.50, 0.075, 0.75),
    "gpt-5.4-nano": _price(0.20, 1.25, 0.02, 0.20),
    "gpt-4.1": _price(2.0, 8.0, 0.50, 2.0),
    "gpt-4.1-mini": _price(0.40, 1.60, 0.10, 0.40),
    "gpt-4.1-nano": _price(0.10, 0.40, 0.025, 0.10),
}


class PricingTable:
    def __init__(self, prices: dict[str, ModelPrice]) -> None:
        self._prices = dict(prices)
        self._unpriced: set[str] = set()

    def models(self) -> list[str]:
        return sorted(self._prices)

    def prices(self) -> dict[str, ModelPrice]:
        return dict(self._prices)

    def price_of(self, model: str) -> ModelPrice | None:
        """The price of `model`, or of the model it is a dated snapshot of
        (`claude-haiku-4-5-20251001` as `claude-haiku-4-5`, `gpt-4.1-2025-04-14` as `gpt-4.1`)."""
        if model in self._prices:
            return self._prices[model]
        snapshot = _SNAPSHOT.fullmatch(model)
        return self._prices.get(snapshot.group(1)) if snapshot else None

    def priced(self, usage: TokenUsage, *models: str) -> TokenUsage:
        """`usage` with its cost at the price of the first of `models` the table lists (the
        model a reply names, then the one asked for); 0 when it lists none of them."""
        price = next(filter(None, (self.price_of(model) for model in models)), None)
        if price is None:
            self._warn_unpriced(models[0] if models else "?")
            return usage.model_copy(update={"cost_usd": 0.0, "models": list(models[:1])})
        return usage.model_copy(update={"cost_usd": price.cost(usage), "models": list(models[:1])})

    def _warn_unpriced(self, model: str) -> None:
        if model not in self._unpriced:
            self._unpriced.add(model)
            log.warning(
                "pricing.unknown_model",
                model=model,
                hint=f"price it in the file named by {PRICING_FILE_VARIABLE}; it counts as free",
            )


def load_pricing(path: str | None) -> PricingTable:
    """The default prices, with the models in the file at `path` (if any) added or replaced."""
    prices = dict(DEFAULT_PRICES)
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
    return PricingTable(prices)
