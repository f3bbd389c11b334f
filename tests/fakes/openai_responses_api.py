"""The OpenAI Responses API (`POST /v1/responses`), as far as the provider uses it.

Its name is the provider's, `openai`: the same SDK, key and base URL as Chat Completions, only
another route. `refusal_reply` and `failed_reply` script the ways a response says no.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes import FakeCall, Recorded, Reply, Responder, SentResult, Usage


class OpenAIResponsesApi:
    name = "openai"
    route = "/v1/responses"

    def base_url(self, root: str) -> str:
        return f"{root}/v1"

    def text_reply(
        self, text: str, usage: Usage, *, cut_off: bool = False, reasoning: int = 0
    ) -> Responder:
        """A response with one output message (after a reasoning item, if `reasoning`); cut
        off, it is `incomplete` for `max_output_tokens`."""
        incomplete = {"reason": "max_output_tokens"} if cut_off else None
        items = [_message([{"type": "output_text", "text": text, "annotations": []}])]
        return _response(items, usage, incomplete=incomplete, reasoning=reasoning)

    def tool_calls_reply(self, calls: list[FakeCall], usage: Usage, text: str = "") -> Responder:
        """A response whose output holds `function_call` items (after a message, if `text`)."""
        items: list[dict[str, Any]] = (
            [_message([{"type": "output_text", "text": text, "annotations": []}])] if text else []
        )
        items.extend(
            {
                "type": "function_call",
                "id": f"fc_{call.id}",
                "call_id": call.id,
                "name": call.tool,
                "arguments": json.dumps(call.arguments),
                "status": "completed",
            }
            for call in calls
        )
        return _response(items, usage)

    def refusal_reply(
        self, refusal: str, usage: Usage, flagged: dict[str, bool] | None = None
    ) -> Responder:
        """A response whose message is a refusal; `flagged`: its moderation's categories."""
        moderation = None
        if flagged is not None:
            result = {
                "type": "moderation_result",
                "model": "omni-moderation-latest",
                "flagged": any(flagged.values()),
                "categories": flagged,
                "category_scores": {name: float(hit) for name, hit in flagged.items()},
                "category_applied_input_types": {name: ["text"] for name in flagged},
            }
            moderation = {"input": result, "output": result}
        items = [_message([{"type": "refusal", "refusal": refusal}])]
        return _response(items, usage, moderation=moderation)

    def failed_reply(self, code: str, message: str, usage: Usage) -> Responder:
        """A response that failed with an error `code` (`server_error`, `bio_policy`...)."""
        return _response([], usage, error={"code": code, "message": message})

    def offered_tools(self, request: Recorded) -> list[str]:
        return [tool["name"] for tool in request.body.get("tools", [])]

    def sent_results(self, request: Recorded) -> list[SentResult]:
        failed = "ERROR: "
        return [
            SentResult(
                item["call_id"],
                item["output"].removeprefix(failed),
                item["output"].startswith(failed),
            )
            for item in request.body["input"]
            if item.get("type") == "function_call_output"
        ]

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
        return Reply(status, body, headers or {})

    def system_text(self, request: Recorded) -> str:
        return str(request.body.get("instructions") or "")

    def user_text(self, request: Recorded) -> str:
        said = [item for item in request.body["input"] if item.get("role") == "user"]
        return str(said[-1]["content"]) if said else ""

    def output_schema(self, request: Recorded) -> dict[str, Any] | None:
        output_format = request.body.get("text", {}).get("format")
        if not output_format or output_format.get("type") != "json_schema":
            return None
        schema: dict[str, Any] = output_format["schema"]
        return schema


def _message(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": content,
    }


def _response(
    items: list[dict[str, Any]],
    usage: Usage,
    *,
    incomplete: dict[str, str] | None = None,
    error: dict[str, str] | None = None,
    moderation: dict[str, Any] | None = None,
    reasoning: int = 0,
) -> Responder:
    """A response of `items`, from the model the request named."""
    status = "failed" if error else "incomplete" if incomplete else "completed"
    if reasoning:
        items = [{"type": "reasoning", "id": "rs_1", "summary": []}, *items]

    def reply(request: Recorded) -> Reply:
        return Reply(
            200,
            {
                "id": f"resp_{len(request.body['input'])}",
                "object": "response",
                "created_at": 1_770_000_000,
                "model": request.body["model"],
                "status": status,
                "error": error,
                "incomplete_details": incomplete,
                "moderation": moderation,
                "output": items,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": request.body.get("tools", []),
                "usage": {
                    "input_tokens": usage.input,
                    "input_tokens_details": {
                        "cached_tokens": usage.cache_read,
                        "cache_write_tokens": usage.cache_write,
                    },
                    "output_tokens": usage.output,
                    "output_tokens_details": {"reasoning_tokens": reasoning},
                    "total_tokens": usage.input + usage.output,
                },
            },
        )

    return reply
