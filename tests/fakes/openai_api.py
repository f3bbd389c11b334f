"""The OpenAI Chat Completions API (`POST /v1/chat/completions`), as far as the provider uses it."""

from __future__ import annotations

from typing import Any

from tests.fakes import Recorded, Reply, Responder, Usage


class OpenAIApi:
    name = "openai"
    route = "/v1/chat/completions"

    def base_url(self, root: str) -> str:
        return f"{root}/v1"

    def text_reply(self, text: str, usage: Usage, *, cut_off: bool = False) -> Responder:
        """A completion with one choice, from the model the request named."""

        def reply(request: Recorded) -> Reply:
            return Reply(
                200,
                {
                    "id": f"chatcmpl-{len(text)}",
                    "object": "chat.completion",
                    "created": 1_770_000_000,
                    "model": request.body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text, "refusal": None},
                            "finish_reason": "length" if cut_off else "stop",
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
                    },
                },
            )

        return reply

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
