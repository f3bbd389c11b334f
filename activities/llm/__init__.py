"""LLM providers behind one interface. Only the offline `scripted` provider ships today."""

from __future__ import annotations

from activities.llm.base import LLMProvider, ProviderConfigError
from activities.llm.scripted import ScriptedProvider

PROVIDERS = ("scripted",)


def build_provider(name: str) -> LLMProvider:
    """The provider called `name`, built once per worker and injected into the activities."""
    if name == "scripted":
        return ScriptedProvider()
    raise ProviderConfigError(
        f"unknown LLM provider '{name}' (HARNESS_LLM_PROVIDER); available: {', '.join(PROVIDERS)}"
    )


__all__ = ["PROVIDERS", "LLMProvider", "ProviderConfigError", "ScriptedProvider", "build_provider"]
