"""What a failed model call cost, attached to its failure so that the run's budget is charged.

A call that got a reply (cut off, unparseable, a refusal, `cannot_plan`, no text) costs what
the server reported, or an estimate from its characters where it reported nothing. A call that
got no reply costs an estimate: its input for a refused request (4xx/5xx, no connection), its
input plus its whole output cap for an abandoned one (a timeout: the server may well have
generated, and billed, all of it). Estimates are marked `estimated`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from activities.llm.base import ProviderError
from activities.llm.structured import ModelCannotPlanError
from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage, estimate_tokens

Pricer = Callable[[TokenUsage], TokenUsage]


def spent_by(error: Exception) -> TokenUsage | None:
    """What the failed call behind `error` cost, if it says."""
    if isinstance(error, ProviderError | ModelCannotPlanError):
        return error.usage
    return None


def estimated(sent: str, output_tokens: int = 0) -> TokenUsage:
    return TokenUsage(
        input_tokens=estimate_tokens(sent), output_tokens=output_tokens, estimated=True
    )


@contextmanager
def charged(usage: TokenUsage) -> Iterator[None]:
    """A ProviderError or a model's cannot_plan raised inside carries `usage`, unless it carries
    one."""
    try:
        yield
    except (ProviderError, ModelCannotPlanError) as error:
        if error.usage is None:
            error.usage = usage
        raise


@contextmanager
def charged_estimate(sent: str, max_tokens: int, priced: Pricer) -> Iterator[None]:
    """A request that got no reply: estimated from `sent`, with `max_tokens` of output when it
    was abandoned (TIMEOUT), none when the server refused it."""
    try:
        yield
    except ProviderError as error:
        if error.usage is None:
            output = max_tokens if error.code is ErrorCode.TIMEOUT else 0
            error.usage = priced(estimated(sent, output))
        raise
