"""LLM providers behind one interface, chosen by name (HARNESS_LLM_PROVIDER or per run)."""

from __future__ import annotations

from activities.llm.base import LLMProvider, ProviderConfigError, ProviderError
from activities.llm.registry import FACTORIES, ProviderRegistry
from activities.llm.scripted import ScriptedProvider

__all__ = [
    "FACTORIES",
    "LLMProvider",
    "ProviderConfigError",
    "ProviderError",
    "ProviderRegistry",
    "ScriptedProvider",
]
