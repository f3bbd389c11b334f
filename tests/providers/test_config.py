"""Choosing and configuring a provider: names, keys, models per role, and failing fast."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from activities.llm import ProviderConfigError, ProviderRegistry
from activities.llm.anthropic_provider import AnthropicProvider
from activities.llm.config import ANTHROPIC, OPENAI, ProviderSettings, RoleModels, Vendor
from activities.llm.openai_provider import OpenAIProvider
from infra.settings import Settings
from starter.cli.app import build_parser
from starter.cli.commands import run_request
from tests.worker_processes import worker_refusal

ROOT = Path(__file__).parent.parent.parent
PROVIDER_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "HARNESS_PLANNER_MODEL",
    "HARNESS_WORKER_MODEL",
    "HARNESS_JUDGE_MODEL",
    "HARNESS_PRICING_FILE",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in PROVIDER_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.parametrize("name", ["anthropic", "openai"])
def test_a_missing_key_fails_when_the_provider_is_built_and_names_the_variable(name: str) -> None:
    with pytest.raises(ProviderConfigError) as raised:
        ProviderRegistry(default=name).get()
    assert str(raised.value).startswith(f"{name.upper()}_API_KEY is not set; ")
    assert "HARNESS_LLM_PROVIDER" in str(raised.value)


def test_a_missing_key_with_a_local_base_url_says_any_value_will_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    with pytest.raises(ProviderConfigError, match="any value will do"):
        ProviderSettings.from_env(OPENAI)


@pytest.mark.parametrize(
    ("name", "kind"), [("anthropic", AnthropicProvider), ("openai", OpenAIProvider)]
)
def test_each_hosted_provider_is_registered_and_built_once_per_worker(
    monkeypatch: pytest.MonkeyPatch, name: str, kind: type
) -> None:
    monkeypatch.setenv(f"{name.upper()}_API_KEY", "sk-test")
    registry = ProviderRegistry(default="scripted")
    provider = registry.get(name)
    assert isinstance(provider, kind) and provider.name == name
    assert registry.get(name) is provider


@pytest.mark.parametrize("vendor", [ANTHROPIC, OPENAI], ids=lambda vendor: vendor.name)
def test_each_role_has_a_default_model_per_provider(vendor: Vendor) -> None:
    settings = ProviderSettings.from_env(vendor, {vendor.key_variable: "sk-test"})
    assert settings.models == vendor.default_models


def test_models_and_the_base_url_come_from_the_environment() -> None:
    env = {
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
        "HARNESS_PLANNER_MODEL": "qwen-planner",
        "HARNESS_WORKER_MODEL": "qwen-writer",
    }
    settings = ProviderSettings.from_env(OPENAI, env)
    assert settings.models == RoleModels(
        planner="qwen-planner", worker="qwen-writer", judge=OPENAI.default_models.judge
    )
    assert settings.models.planning(economy=True) == "qwen-writer"  # the fallback: the writer
    assert settings.base_url == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize("vendor", [ANTHROPIC, OPENAI], ids=lambda vendor: vendor.name)
def test_an_empty_base_url_means_the_providers_own_endpoint(vendor: Vendor) -> None:
    env = {vendor.key_variable: "sk-test", vendor.base_url_variable: " "}
    settings = ProviderSettings.from_env(vendor, env)
    assert settings.url == vendor.default_base_url


def test_the_key_is_not_part_of_the_settings_text() -> None:
    settings = ProviderSettings.from_env(ANTHROPIC, {"ANTHROPIC_API_KEY": "sk-ant-visible?"})
    assert "sk-ant-visible?" not in repr(settings)


def test_the_worker_refuses_to_start_without_the_providers_key() -> None:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    env |= {"HARNESS_LLM_PROVIDER": "anthropic", "TEMPORAL_ADDRESS": "127.0.0.1:1"}
    finished = worker_refusal(env)
    assert finished.returncode == 2
    assert "ANTHROPIC_API_KEY is not set" in finished.stderr
    assert "worker.config_error" in finished.stderr


def test_run_provider_sets_the_provider_of_the_run() -> None:
    args = build_parser().parse_args(["run", "Compare Paris and Tokyo", "--provider", "openai"])
    assert run_request(args, Settings()).provider == "openai"
    default = build_parser().parse_args(["run", "Compare Paris and Tokyo"])
    assert run_request(default, Settings()).provider is None


@pytest.mark.parametrize("vendor", [ANTHROPIC, OPENAI], ids=lambda vendor: vendor.name)
def test_the_fallback_model_is_read_and_serves_planning_and_writing_under_pressure(
    vendor: Vendor,
) -> None:
    env = {vendor.key_variable: "sk-test", "HARNESS_FALLBACK_MODEL": "small-one"}
    models = ProviderSettings.from_env(vendor, env).models
    assert models.planning(economy=True) == models.writing(economy=True) == "small-one"
    assert models.planning(economy=False) == vendor.default_models.planner
    assert models.writing(economy=False) == vendor.default_models.worker


def test_the_providers_the_cli_knows_are_the_ones_a_worker_can_build() -> None:
    from activities.llm.registry import FACTORIES
    from harness.engine.contracts import PROVIDER_NAMES

    assert sorted(FACTORIES) == sorted(PROVIDER_NAMES)


def test_the_agent_model_comes_from_the_environment_and_is_the_planners_by_default() -> None:
    plain = ProviderSettings.from_env(ANTHROPIC, {"ANTHROPIC_API_KEY": "sk-test"})
    assert plain.agent_model(None, economy=False) == ANTHROPIC.default_models.planner
    env = {
        "ANTHROPIC_API_KEY": "sk-test",
        "HARNESS_AGENT_MODEL": "claude-haiku-4-5",
        "HARNESS_FALLBACK_MODEL": "claude-haiku-4-5",
    }
    configured = ProviderSettings.from_env(ANTHROPIC, env)
    assert configured.models.agent == "claude-haiku-4-5"
    assert configured.agent_model(None, economy=False) == "claude-haiku-4-5"
    assert configured.agent_model("claude-opus-4-7", economy=False) == "claude-opus-4-7"
    assert configured.agent_model("claude-opus-4-7", economy=True) == "claude-haiku-4-5"
