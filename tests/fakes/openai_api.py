"""The OpenAI Chat Completions API (`POST /v1/chat/completions`), as far as the provider uses it."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes import FakeCall, Recorded, Reply, Responder, SentResult, Usage


class OpenAIApi:
    name = "openai"
    route = "/v1/chat/completions"

    def base_url(self, root: str) -> str:
        return f"{root}/v1"

    def text_reply(self, text: str, usage: Usage, *, cut_off: bool = False) -> Responder:
        """A completion with one choice, from the model the request named."""
        message = {"role": "assistant", "content": text, "refusal": None}
        return _completion(message, "length" if cut_off else "stop", usage)

    def tool_calls_reply(self, calls: list[FakeCall], usage: Usage, text: str = "") -> Responder:
        """A completion whose assistant message has `tool_calls` (arguments as JSON text)."""
        message = {
            "role": "assistant",
            "content": text or None,
            "refusal": None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.tool, "arguments": json.dumps(call.arguments)},
                }
                for call in calls
            ],
        }
        return _completion(message, "tool_calls", usage)

    def offered_tools(self, request: Recorded) -> list[str]:
        return [tool["function"]["name"] for tool in request.body.get("tools", [])]

    def sent_results(self, request: Recorded) -> list[SentResult]:
        failed = "ERROR: "
        return [
            SentResult(
                message["tool_call_id"],
                message["content"].removeprefix(failed),
                message["content"].startswith(failed),
            )
            for message in request.body["messages"]
            if message["role"] == "tool"
        ]

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
        return Reply(status, body, headers or {})

    def system_text(self, request: Recorded) -> str:
        return "".join(
            m["content"] for m in request.body["messages"] if m["role"] in ("system", "developer")
        )

    def user_text(self, request: Recorded) -> str:
        return str(request.body["messages"][-1]["content"])

    def output_schema(self, request: Recorded) -> dict[str, Any] | None:
        response_format = request.body.get("response_format")
        if not response_format or response_format.get("type") != "json_schema":
            return None
        schema: dict[str, Any] = response_format["json_schema"]["schema"]
        return schema


def _completion(message: dict[str, Any], finish_reason: str, usage: Usage) -> Responder:
    """A completion with one choice, from the model the request named."""

    def reply(request: Recorded) -> Reply:
        return Reply(
            200,
            {
                "id": f"chatcmpl-{len(request.body['messages'])}",
                "object": "chat.completion",
                "created": 1_770_000_000,
                "model": request.body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": finish_reason,
                        "logprobs": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": usage.input,
                    "completion_tokens": usage.output,
                    "total_tokens": usage.input + usage.output,
                    "prompt_tokens_details": {
                        "cached_tokens": usage.cache_read,
                        "cache_write_tokens": usage.cache_write,
                    },
                    "completion_tokens_details": {"reasoning_tokens": usage.reasoning},
                },
            },
        )

    return reply
