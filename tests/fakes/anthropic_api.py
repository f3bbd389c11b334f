"""The Anthropic Messages API (`POST /v1/messages`), as far as the provider uses it."""

from __future__ import annotations

from typing import Any

from tests.fakes import Recorded, Reply, Responder, Usage


class AnthropicApi:
    name = "anthropic"
    route = "/v1/messages"

    def base_url(self, root: str) -> str:
        return root

    def text_reply(self, text: str, usage: Usage, *, cut_off: bool = False) -> Responder:
        """A message with one text block, from the model the request named."""

        def reply(request: Recorded) -> Reply:
            return Reply(
                200,
                {
                    "id": f"msg_{len(text)}",
                    "type": "message",
                    "role": "assistant",
                    "model": request.body["model"],
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "max_tokens" if cut_off else "end_turn",
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": usage.input - usage.cache_read - usage.cache_write,
                        "cache_read_input_tokens": usage.cache_read,
                        "cache_creation_input_tokens": usage.cache_write,
                        "output_tokens": usage.output,
                    },
                },
            )

        return reply

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        body = {"type": "error", "error": {"type": "api_error", "message": message}}
        return Reply(status, body, headers or {})

    def system_text(self, request: Recorded) -> str:
        return "".join(block["text"] for block in request.body.get("system", []))

    def user_text(self, request: Recorded) -> str:
        content = request.body["messages"][-1]["content"]
        return content if isinstance(content, str) else "".join(b["text"] for b in content)

    def output_schema(self, request: Recorded) -> dict[str, Any] | None:
        output_format = request.body.get("output_config", {}).get("format")
        return output_format["schema"] if output_format else None
