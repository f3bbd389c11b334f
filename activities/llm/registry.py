"""Providers by name, each built once per worker on first use and shared by every activity.
A name `chaos:RATE:SEED:KEY:INNER` (an eval with --chaos) is the INNER provider wrapped in the
chaos provider, built per call: the wrapper holds nothing but its draws."""

from __future__ import annotations

from collections.abc import Callable

from activities.llm.anthropic_provider import AnthropicProvider
from activities.llm.base import LLMProvider, ProviderConfigError
from activities.llm.chaos import ChaosProvider
from activities.llm.openai_provider import OpenAIProvider
from activities.llm.scripted import ScriptedProvider
from harness.evals.chaos import ChaosSpec, is_chaos

ProviderFactory = Callable[[], LLMProvider]

FACTORIES: dict[str, ProviderFactory] = {
    "scripted": ScriptedProvider,
    "anthropic": AnthropicProvider.from_env,
    "openai": OpenAIProvider.from_env,
}


class ProviderRegistry:
    def __init__(
        self,
        default: str,
        factories: dict[str, ProviderFactory] | None = None,
        fixed: LLMProvider | None = None,
    ) -> None:
        self.default = default
        self._factories = factories if factories is not None else FACTORIES
        self._fixed = fixed
        self._built: dict[str, LLMProvider] = {}

    @classmethod
    def always(cls, provider: LLMProvider) -> ProviderRegistry:
        """A registry that answers every name with `provider` (tests, custom set-ups)."""
        return cls(default=provider.name, factories={}, fixed=provider)

    def names(self) -> list[str]:
        return sorted(self._factories)

    def get(self, name: str | None = None) -> LLMProvider:
        if is_chaos(name):
            assert name is not None
            try:
                spec = ChaosSpec.parse(name)
            except ValueError as error:
                raise ProviderConfigError(str(error)) from error
            return ChaosProvider(self.get(spec.inner), spec)
        if self._fixed is not None:
            return self._fixed
        wanted = name or self.default
        if wanted not in self._built:
            factory = self._factories.get(wanted)
            if factory is None:
                raise ProviderConfigError(
                    f"unknown LLM provider '{wanted}'; available: {', '.join(self.names())}"
                )
            self._built[wanted] = factory()
        return self._built[wanted]
