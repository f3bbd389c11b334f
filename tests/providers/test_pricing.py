"""Pricing: reported tokens times USD per million tokens, per model, overridable from a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from activities.llm import ProviderConfigError
from activities.llm.pricing import DEFAULT_PRICES, ModelPrice, PricingTable, load_pricing
from harness.core.usage import TokenUsage

SONNET = ModelPrice(input=3.0, output=15.0, cached_input=0.30, cache_write=3.75)


def test_each_kind_of_token_is_charged_at_its_own_rate() -> None:
    usage = TokenUsage(
        input_tokens=1_500, cached_tokens=1_000, cache_write_tokens=200, output_tokens=400
    )
    priced = PricingTable({"m": SONNET}).priced(usage, "m")
    # 300 uncached x $3 + 1000 cached x $0.30 + 200 written x $3.75 + 400 out x $15, per million
    assert priced.cost_usd == pytest.approx((900 + 300 + 750 + 6_000) / 1_000_000)
    assert priced.model_copy(update={"cost_usd": 0.0}) == usage.model_copy(update={"models": ["m"]})


def test_cached_and_written_tokens_cost_the_input_price_when_no_rate_is_given() -> None:
    usage = TokenUsage(input_tokens=1_000, cached_tokens=600, cache_write_tokens=100)
    priced = PricingTable({"m": ModelPrice(input=2.0, output=8.0)}).priced(usage, "m")
    assert priced.cost_usd == pytest.approx(2_000 / 1_000_000)


def test_a_dated_snapshot_is_priced_as_the_model_it_is_a_snapshot_of() -> None:
    other = ModelPrice(input=9, output=9)
    table = PricingTable({"claude-haiku-4-5": SONNET, "claude-haiku-4": other, "gpt-4.1": other})
    assert table.price_of("claude-haiku-4-5-20251001") == SONNET
    assert table.price_of("gpt-4.1-2025-04-14") == other
    assert table.price_of("claude-haiku-4-50") is None
    assert table.price_of("gpt-4.1-mini-2025-04-14") is None


def test_the_reply_model_is_priced_first_then_the_model_asked_for() -> None:
    table = PricingTable({"asked": SONNET})
    usage = TokenUsage(output_tokens=1_000_000)
    assert table.priced(usage, "served-by-a-proxy", "asked").cost_usd == pytest.approx(15.0)


def test_an_unpriced_model_costs_nothing_but_keeps_its_tokens() -> None:
    usage = TokenUsage(input_tokens=10, output_tokens=5)
    priced = PricingTable({}).priced(usage, "local-llama", "local-llama")
    assert priced.cost_usd == 0.0 and priced.total_tokens == 15


def test_the_default_models_of_both_providers_are_priced() -> None:
    from activities.llm.config import ANTHROPIC, OPENAI

    table = load_pricing(None)
    for vendor in (ANTHROPIC, OPENAI):
        models = vendor.default_models
        for model in (models.planner, models.worker, models.judge):
            assert table.price_of(model) is not None, model


def test_a_pricing_file_adds_models_and_replaces_listed_ones(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {"gpt-4.1": {"input": 1, "output": 2}, "my-vllm-model": {"input": 0.1, "output": 0.2}}
        )
    )
    table = load_pricing(str(path))
    assert table.price_of("gpt-4.1") == ModelPrice(input=1, output=2)
    assert table.price_of("my-vllm-model") == ModelPrice(input=0.1, output=0.2)
    assert table.price_of("claude-haiku-4-5") == DEFAULT_PRICES["claude-haiku-4-5"]


def test_a_pricing_file_that_is_not_a_table_names_the_variable_and_the_problem(
    tmp_path: Path,
) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"gpt-4.1": {"input": "cheap"}}))
    with pytest.raises(ProviderConfigError) as raised:
        load_pricing(str(path))
    message = str(raised.value)
    assert message.startswith(f"HARNESS_PRICING_FILE={path} is not a pricing table")
    assert "gpt-4.1.input" in message


def test_a_missing_pricing_file_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ProviderConfigError, match=r"HARNESS_PRICING_FILE=.* cannot be read"):
        load_pricing(str(tmp_path / "absent.json"))
