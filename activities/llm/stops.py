"""Why a model stopped, where the stop is a failure: it refused, or its reply was cut at its limit.

A refusal is a POLICY_VIOLATION whose message names the category the API gave (Anthropic's
`stop_details.category`, the categories a moderated OpenAI reply was flagged for, a Responses
error code such as `bio_policy`), so that a person reading the failure knows what tripped it.
A writer's reply cut at its token limit is INVALID_MODEL_OUTPUT, never a truncated report: the
node fails, and the run replans with the message (a plan that asks for less may fit).
"""

from __future__ import annotations

from collections.abc import Sequence

from openai.types.chat import ChatCompletion
from openai.types.chat.chat_completion import Choice

from activities.llm.base import ProviderError
from harness.core.errors import ErrorCode
from harness.core.usage import TokenUsage

_SAID_CHARS = 200


def refused(
    model: str,
    *,
    said: str | None = None,
    categories: Sequence[str] | None = None,
    filtered: bool = False,
    usage: TokenUsage | None = None,
) -> ProviderError:
    """A POLICY_VIOLATION naming what the API said of the refusal: its categories (or that it
    named none), whether a content filter stopped the reply, and the model's own words."""
    named = ", ".join(categories) if categories else "none given"
    message = f"{model} refused (category: {named})"
    if filtered:
        message += ": its content filter stopped the reply"
    if said and said.strip():
        message += f": {' '.join(said.split())[:_SAID_CHARS]}"
    return ProviderError(ErrorCode.POLICY_VIOLATION, message, usage=usage)


def writer_cut_off(model: str, limit: int, usage: TokenUsage | None = None) -> ProviderError:
    """A writer's reply that reached its token limit: the text is incomplete, so it is no
    reply. The limit is the one the request was sent with: the tool's
    (`TextRequest.max_output_tokens`) and any room left for reasoning."""
    reasoning = (
        f", {usage.reasoning_tokens} of them reasoning"
        if usage is not None and usage.reasoning_tokens
        else ""
    )
    return ProviderError(
        ErrorCode.INVALID_MODEL_OUTPUT,
        f"{model}'s text was cut at its limit of {limit} output tokens{reasoning}, so it is "
        "incomplete; raise the tool's max_output_tokens (TextRequest), give it less to write "
        "about, or choose a worker model that writes shorter (HARNESS_WORKER_MODEL)",
        usage=usage,
    )


def flagged(categories: dict[str, bool] | None) -> list[str]:
    """The categories a moderation result flagged, in order."""
    return sorted(name for name, hit in (categories or {}).items() if hit)


def chat_refused(completion: ChatCompletion, choice: Choice) -> ProviderError:
    """A Chat Completions refusal (`message.refusal`) or filtered reply (`content_filter`),
    with the categories a moderated completion was flagged for."""
    output = completion.moderation.output if completion.moderation else None
    results = output.results if output and output.type == "moderation_results" else []
    return refused(
        completion.model,
        said=choice.message.refusal,
        categories=sorted({name for result in results for name in flagged(result.categories)}),
        filtered=not choice.message.refusal,
    )
