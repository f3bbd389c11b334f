"""The arguments a provider adds to a role's request: its reasoning (activities.llm.reasoning)
and, for plans, the scenario's prompt cache key (activities.llm.caching). Each provider passes
them through as they are, so a request's shape is decided here."""

from __future__ import annotations

from typing import Any

from activities.llm.caching import plan_cache_key
from activities.llm.config import ProviderSettings
from activities.llm.reasoning import Role


def openai_options(
    settings: ProviderSettings, role: Role, scenario: str | None = None
) -> dict[str, Any]:
    """`reasoning_effort` when the role's is set; `prompt_cache_key` for a scenario's plans."""
    options = settings.reasoning.openai_options(role)
    if scenario is not None:
        options["prompt_cache_key"] = plan_cache_key(scenario)
    return options


def responses_options(
    settings: ProviderSettings, role: Role, scenario: str | None = None
) -> dict[str, Any]:
    """The same for the Responses API, which takes the effort as `reasoning: {effort}`."""
    options = openai_options(settings, role, scenario)
    effort = options.pop("reasoning_effort", None)
    if effort is not None:
        options["reasoning"] = {"effort": effort}
    return options


def anthropic_options(settings: ProviderSettings, role: Role, model: str) -> dict[str, Any]:
    """`thinking` when the role's reasoning is on."""
    return settings.reasoning.anthropic_options(role, model)
