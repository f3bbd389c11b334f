"""A model's refusal, through each SDK provider against its fake: a POLICY_VIOLATION whose
message names the category the API gave (or says it gave none) and what the model said."""

from __future__ import annotations

from typing import Any

import pytest

from activities.llm import LLMProvider, ProviderError
from harness.catalog.llm import TextRequest
from harness.core.errors import ErrorCode
from tests.fakes import FakeServer, Recorded, Reply, Responder, Usage
from tests.fakes.anthropic_api import AnthropicApi
from tests.fakes.openai_api import OpenAIApi
from tests.providers.support import MODELS

WRITE = TextRequest(system="You write.", prompt="Describe Paris.", draft="Paris.")


def changed(responder: Responder, change: dict[str, Any], choice: dict[str, Any]) -> Responder:
    """`responder`'s reply with `change` merged into its body and `choice` into its first
    choice (Chat Completions)."""

    def reply(request: Recorded) -> Reply:
        body = dict(responder(request).body)
        body.update(change)
        if choice:
            first = {**body["choices"][0], **choice}
            first["message"] = {**first["message"], **choice.get("message", {})}
            body["choices"] = [first]
        return Reply(200, body)

    return reply


@pytest.mark.parametrize("api", ["anthropic"], indirect=True)
@pytest.mark.parametrize(
    ("details", "said"),
    [
        (
            {"type": "refusal", "category": "cyber", "explanation": "It asks for an exploit."},
            "refused (category: cyber): It asks for an exploit.",
        ),
        (None, "refused (category: none given): I won't."),
    ],
)
async def test_an_anthropic_refusal_names_its_category_and_explanation(
    api: AnthropicApi,
    server: FakeServer,
    provider: LLMProvider,
    details: dict[str, str] | None,
    said: str,
) -> None:
    change = {"stop_reason": "refusal", "stop_details": details}
    server.enqueue(changed(api.text_reply("I won't.", Usage(20, 3)), change, {}))
    with pytest.raises(ProviderError) as raised:
        await provider.write(WRITE)
    assert raised.value.code is ErrorCode.POLICY_VIOLATION
    assert raised.value.message == f"{MODELS.worker} {said}"


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_an_openai_refusal_is_a_policy_violation_with_the_models_words(
    api: OpenAIApi, server: FakeServer, provider: LLMProvider
) -> None:
    refusal = {"message": {"content": None, "refusal": "I can't help with that."}}
    server.enqueue(changed(api.text_reply("", Usage(20, 3)), {}, refusal))
    with pytest.raises(ProviderError) as raised:
        await provider.write(WRITE)
    assert raised.value.code is ErrorCode.POLICY_VIOLATION
    assert raised.value.message == (
        f"{MODELS.worker} refused (category: none given): I can't help with that."
    )


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_an_openai_content_filter_names_the_categories_moderation_flagged(
    api: OpenAIApi, server: FakeServer, provider: LLMProvider
) -> None:
    result = {
        "type": "moderation_result",
        "model": "omni-moderation-latest",
        "flagged": True,
        "categories": {"violence": True, "hate": False, "illicit": True},
        "category_scores": {"violence": 0.9, "hate": 0.1, "illicit": 0.8},
        "category_applied_input_types": {"violence": ["text"]},
    }
    results = {"type": "moderation_results", "model": "omni-moderation-latest"}
    moderation = {
        "input": {**results, "results": []},
        "output": {**results, "results": [result]},
    }
    filtered = changed(
        api.text_reply("Here is how", Usage(20, 3)),
        {"moderation": moderation},
        {"finish_reason": "content_filter"},
    )
    server.enqueue(filtered)
    with pytest.raises(ProviderError) as raised:
        await provider.write(WRITE)
    assert raised.value.code is ErrorCode.POLICY_VIOLATION
    assert raised.value.message == (
        f"{MODELS.worker} refused (category: illicit, violence): "
        "its content filter stopped the reply"
    )
