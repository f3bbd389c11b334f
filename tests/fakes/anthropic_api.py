"""The Anthropic Messages API (`POST /v1/messages`), as far as the provider uses it."""

from __future__ import annotations

from typing import Any

from tests.fakes import FakeCall, Recorded, Reply, Responder, SentResult, Usage


class AnthropicApi:
    name = "anthropic"
    route = "/v1/messages"

    def base_url(self, root: str) -> str:
        return root

    def text_reply(self, text: str, usage: Usage, *, cut_off: bool = False) -> Responder:
        """A message with one text block (after a thinking block when `usage` counts reasoning),
        from the model the request named."""
        blocks = [{"type": "text", "text": text}]
        if usage.reasoning:
            thought = {"type": "thinking", "thinking": "Let me see.", "signature": "sig-1"}
            blocks.insert(0, thought)
        return _message(blocks, "max_tokens" if cut_off else "end_turn", usage)

    def tool_calls_reply(self, calls: list[FakeCall], usage: Usage, text: str = "") -> Responder:
        """A message with `tool_use` blocks (after a text block, if `text`)."""
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks.extend(
            {"type": "tool_use", "id": call.id, "name": call.tool, "input": call.arguments}
            for call in calls
        )
        return _message(blocks, "tool_use", usage)

    def offered_tools(self, request: Recorded) -> list[str]:
        return [tool["name"] for tool in request.body.get("tools", [])]

    def sent_results(self, request: Recorded) -> list[SentResult]:
        return [
            SentResult(block["tool_use_id"], block["content"], bool(block.get("is_error")))
            for message in request.body["messages"]
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"]
            if block["type"] == "tool_result"
        ]

    def error_reply(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Reply:
        body = {"type": "error", "error": {"type": "api_error", "message": message}}
        return Reply(status, body, headers or {})

    def system_text(self, request: Recorded) -> str:
        return "".join(block["text"] for block in request.body.get("system", []))

    def user_text(self, request: Recorded) -> str:
        content = request.body["messages"][-1]["content"]
        if isinstance(content, str):
            return content
        return "".join(block["text"] for block in content if block["type"] == "text")

    def output_schema(self, request: Recorded) -> dict[str, Any] | None:
        output_format = request.body.get("output_config", {}).get("format")
        return output_format["schema"] if output_format else None


def _message(blocks: list[dict[str, Any]], stop_reason: str, usage: Usage) -> Responder:
    """A message of `blocks`, from the model the request named."""

    def reply(request: Recorded) -> Reply:
        return Reply(
            200,
            {
                "id": f"msg_{len(request.body['messages'])}",
                "type": "message",
                "role": "assistant",
                "model": request.body["model"],
                "content": blocks,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": usage.input - usage.cache_read - usage.cache_write,
                    "cache_read_input_tokens": usage.cache_read,
                    "cache_creation_input_tokens": usage.cache_write,
                    "output_tokens": usage.output,
                    "output_tokens_details": {"thinking_tokens": usage.reasoning},
                },
            },
        )

    return reply
