"""Real providers, built as a worker builds them, pointed at a fake API server on 127.0.0.1."""

from __future__ import annotations

from activities.llm import LLMProvider
from activities.llm.anthropic_provider import AnthropicProvider
from activities.llm.config import ANTHROPIC, OPENAI, ProviderSettings, RoleModels
from activities.llm.openai_provider import OpenAIProvider
from activities.llm.pricing import ModelPrice, PricingTable
from activities.llm.reasoning import NO_REASONING_SETTINGS, Reasoning
from tests.fakes import FakeApi
from tests.fakes.anthropic_api import AnthropicApi
from tests.fakes.openai_api import OpenAIApi

TEST_KEY = "sk-test-9c41f7d2e8b05a6f"
MODELS = RoleModels(planner="test-planner", worker="test-writer", judge="test-judge")
# USD per million tokens: input, output, cached read, cache write.
RATES: dict[str, tuple[float, float, float, float]] = {
    "test-planner": (3.0, 15.0, 0.30, 3.75),
    "test-writer": (1.0, 5.0, 0.10, 1.25),
    "test-judge": (2.0, 10.0, 0.20, 2.50),
}
PRICING = PricingTable(
    {
        model: ModelPrice(input=rate[0], output=rate[1], cached_input=rate[2], cache_write=rate[3])
        for model, rate in RATES.items()
    }
)
PRICE = ModelPrice(input=1.0, output=2.0, cached_input=0.1, cache_write=1.25)
APIS: dict[str, FakeApi] = {"anthropic": AnthropicApi(), "openai": OpenAIApi()}


def build_provider(
    api: FakeApi,
    base_url: str,
    key: str = TEST_KEY,
    pricing: PricingTable = PRICING,
    reasoning: Reasoning = NO_REASONING_SETTINGS,
) -> LLMProvider:
    vendor = ANTHROPIC if api.name == "anthropic" else OPENAI
    settings = ProviderSettings(
        vendor=vendor,
        api_key=key,
        models=MODELS,
        pricing=pricing,
        base_url=base_url,
        reasoning=reasoning,
    )
    if api.name == "anthropic":
        return AnthropicProvider(settings)
    return OpenAIProvider(settings)
