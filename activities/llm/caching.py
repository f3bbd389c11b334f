"""Prompt caching: the key OpenAI routes a scenario's plans by, and a warning when a planner
prompt is too short for the model's cache to hold it.

A cache holds only a prompt prefix of at least a minimum length: on Anthropic 1,024 to 4,096
tokens by model (the marked system prompt is then written once and read after), on OpenAI 1,024
(caching is automatic). A shorter planner prompt is sent whole every time; the worker says so
once per model and scenario, from the token counts of a reply that neither read nor wrote it.
"""

from __future__ import annotations

import structlog

from harness.core.usage import TokenUsage

log = structlog.get_logger()

OPENAI_CACHE_MINIMUM = 1_024
_ANTHROPIC_MINIMUMS: tuple[tuple[str, int], ...] = (
    ("claude-3-haiku", 2_048),
    ("claude-3-5-haiku", 2_048),
    ("claude-haiku-3", 2_048),
    ("claude-haiku-", 4_096),
    ("claude-opus-4-0", 1_024),
    ("claude-opus-4-1", 1_024),
    ("claude-opus-", 4_096),
)
"""By model prefix, first match; Anthropic documents 2,048 for Haiku 3 and 3.5, 4,096 for Haiku
4.5 and Opus 4.5, and 1,024 for Sonnet and the other Opus models; later models of a family are
taken to keep its minimum."""
ANTHROPIC_DEFAULT_MINIMUM = 1_024
_warned: set[tuple[str, str, str]] = set()


def cache_minimum(provider: str, model: str) -> int:
    """The fewest prompt tokens `model` caches."""
    if provider != "anthropic":
        return OPENAI_CACHE_MINIMUM
    return next(
        (tokens for prefix, tokens in _ANTHROPIC_MINIMUMS if model.startswith(prefix)),
        ANTHROPIC_DEFAULT_MINIMUM,
    )


def plan_cache_key(scenario: str) -> str:
    """OpenAI's `prompt_cache_key` of a scenario's plans: requests with the same key and prefix
    go to the same cache, and a scenario's planner prompts share their rules and catalog."""
    return f"harness-plan-{scenario}"


def warn_if_uncached(provider: str, model: str, scenario: str, usage: TokenUsage) -> None:
    """Warn, once per model and scenario, when a prompt under the model's minimum was neither
    read from nor written to the cache."""
    minimum = cache_minimum(provider, model)
    cached = usage.cached_tokens or usage.cache_write_tokens
    if cached or usage.estimated or usage.input_tokens >= minimum:
        return
    if (provider, model, scenario) in _warned:
        return
    _warned.add((provider, model, scenario))
    log.warning(
        "prompt_cache.under_minimum",
        provider=provider,
        model=model,
        scenario=scenario,
        prompt_tokens=usage.input_tokens,
        minimum=minimum,
        hint=f"{model} caches prompts of {minimum:,} tokens or more; each plan of {scenario} "
        "pays for its whole prompt",
    )
