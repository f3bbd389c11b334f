"""Pricing: reported tokens times USD per million tokens, per model, from genai-prices' bundled
table, overridable from a file; an unpriced model's cost is unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import anthropic._data
import genai_prices
import pytest
from anthropic.types import Model
from openai.types import ChatModel

from activities.llm import ProviderConfigError
from activities.llm.config import ANTHROPIC, OPENAI, ProviderSettings, RoleModels, Vendor
from activities.llm.pricing import ModelPrice, PricingTable, load_pricing
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


def test_an_unpriced_model_costs_nothing_keeps_its_tokens_and_marks_its_cost_unknown() -> None:
    usage = TokenUsage(input_tokens=10, output_tokens=5)
    priced = PricingTable({}).priced(usage, "local-llama", "local-llama")
    assert priced.cost_usd == 0.0 and priced.total_tokens == 15
    assert priced.unpriced_models == ["local-llama"] and not priced.cost_known
    summed = priced.plus(PricingTable({"m": SONNET}).priced(usage, "m"))
    assert summed.unpriced_models == ["local-llama"] and not summed.cost_known


def test_a_priced_usage_says_nothing_of_unpriced_models_in_its_payload() -> None:
    priced = PricingTable({"m": SONNET}).priced(TokenUsage(input_tokens=10), "m")
    assert priced.cost_known and "unpriced_models" not in priced.model_dump()


def test_the_maintained_table_prices_a_providers_models_and_their_dated_snapshots() -> None:
    table = load_pricing(None, "anthropic")
    usage = TokenUsage(
        input_tokens=1_500, cached_tokens=1_000, cache_write_tokens=200, output_tokens=400
    )
    # claude-haiku-4-5: $1 in, $0.10 cached, $1.25 written, $5 out, per million
    expected = (300 * 1.0 + 1_000 * 0.10 + 200 * 1.25 + 400 * 5.0) / 1_000_000
    assert table.priced(usage, "claude-haiku-4-5").cost_usd == pytest.approx(expected)
    snapshot = table.priced(usage, "claude-haiku-4-5-20251001")
    assert snapshot.cost_usd == pytest.approx(expected) and snapshot.cost_known
    assert load_pricing(None, "openai").knows("gpt-4.1-2025-04-14")


def test_the_maintained_table_is_the_bundled_one_whatever_else_the_process_loads() -> None:
    from genai_prices import data_snapshot

    usage = TokenUsage(input_tokens=100_000)
    before = load_pricing(None, "openai").cost(usage, "gpt-5.5")
    empty = data_snapshot.DataSnapshot(providers=[], from_auto_update=True)
    data_snapshot.set_custom_snapshot(empty)  # what genai_prices.UpdatePrices does
    try:
        assert load_pricing(None, "openai").cost(usage, "gpt-5.5") == before == pytest.approx(0.5)
    finally:
        data_snapshot.set_custom_snapshot(None)


def test_reasoning_tokens_are_priced_as_the_output_they_are_part_of() -> None:
    table = load_pricing(None, "anthropic")
    plain = TokenUsage(input_tokens=1_000, output_tokens=2_000)
    reasoned = plain.model_copy(update={"reasoning_tokens": 1_500})
    assert table.priced(reasoned, "claude-haiku-4-5").cost_usd == pytest.approx(
        table.priced(plain, "claude-haiku-4-5").cost_usd
    )
    assert table.priced(plain, "claude-haiku-4-5").cost_usd == pytest.approx(0.011)


def test_a_table_of_another_provider_or_of_a_file_alone_does_not_price_a_model() -> None:
    assert not load_pricing(None, "openai").knows("claude-haiku-4-5")
    assert not PricingTable({}).knows("gpt-5.5")
    assert not load_pricing(None, "openai").knows("gpt-unpriced-9")


@pytest.mark.parametrize("vendor", [ANTHROPIC, OPENAI], ids=lambda vendor: vendor.name)
def test_the_default_models_are_priced_listed_by_the_sdk_and_not_deprecated(vendor: Vendor) -> None:
    defaults = vendor.default_models
    table = load_pricing(None, vendor.name)
    listed = str(get_args(Model)[0]) + str(get_args(ChatModel))
    deprecated_openai = ChatModel.__doc__ or ""
    for model in (defaults.planner, defaults.worker, defaults.judge):
        assert table.knows(model), model
        assert f"'{model}'" in listed, model
        assert model not in anthropic._data.DEPRECATED_MODELS
        assert f'"{model}"' not in deprecated_openai, model


def test_an_unpriced_model_is_refused_only_when_the_run_has_a_cost_limit() -> None:
    settings = ProviderSettings(
        vendor=OPENAI,
        api_key="k",
        models=RoleModels(planner="p", worker="w", judge="j"),
        pricing=load_pricing(None, "openai"),
    )
    assert settings.check_priced("my-local-model", cost_limited=False) == "my-local-model"
    assert settings.check_priced("gpt-5.5", cost_limited=True) == "gpt-5.5"
    with pytest.raises(ProviderConfigError) as raised:
        settings.check_priced("my-local-model", cost_limited=True)
    message = str(raised.value)
    assert message.startswith("the run has a cost limit and genai-prices ")
    assert f"{genai_prices.__version__} does not price my-local-model" in message
    assert 'HARNESS_PRICING_FILE, e.g. {"my-local-model": {"input": 1.0' in message
    assert "\n" not in message


def test_a_pricing_file_adds_models_and_replaces_listed_ones(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {"gpt-4.1": {"input": 1, "output": 2}, "my-vllm-model": {"input": 0.1, "output": 0.2}}
        )
    )
    table = load_pricing(str(path), "openai")
    million = TokenUsage(input_tokens=1_000_000)
    assert table.cost(million, "gpt-4.1") == pytest.approx(1.0)  # the table's is $2
    assert table.cost(million, "gpt-4.1-2025-04-14") == pytest.approx(1.0)
    assert table.cost(million, "my-vllm-model") == pytest.approx(0.1)
    assert table.cost(million, "gpt-4.1-mini") == pytest.approx(0.40)  # from the table


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
