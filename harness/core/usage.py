"""Token usage of one model call (or a sum of them), and the estimate used where no provider
counted."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TokenUsage(BaseModel):
    """`input_tokens` counts every prompt token; `cached_tokens` (read from a prompt cache) and
    `cache_write_tokens` (written to it) are the parts of them priced at their own rates."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    """The part of `output_tokens` a reasoning model spent thinking (billed as output)."""
    cost_usd: float = 0.0
    estimated: bool = False
    models: list[str] = Field(
        default_factory=list, description="The models behind this usage, in order of first use."
    )
    unpriced_models: list[str] = Field(
        default_factory=list,
        exclude_if=lambda models: not models,
        description="Models no price table lists: their calls count 0 in `cost_usd`, so the "
        "cost is unknown. Left out when empty.",
    )

    @property
    def cost_known(self) -> bool:
        """Whether `cost_usd` is the whole cost (every model behind the usage is priced)."""
        return not self.unpriced_models

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def plus(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            estimated=self.estimated or other.estimated,
            models=list(dict.fromkeys([*self.models, *other.models])),
            unpriced_models=list(dict.fromkeys([*self.unpriced_models, *other.unpriced_models])),
        )


def estimate_tokens(text: str) -> int:
    """About four characters a token, at least one: what the offline provider reports, and what
    a conversation is measured by before it is sent."""
    return max(1, (len(text) + 3) // 4)
