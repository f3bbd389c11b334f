"""The OpenAI Chat Completions API (`POST /v1/chat/completions`), as far as the provider uses it,
and as the OpenAI-compatible servers that differ from it serve it (`LocalServer`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Quirks:
    """How an OpenAI-compatible server departs from OpenAI's API, as seen from the harness."""

    name: str
    json_schema_fails: bool = False
    """`response_format` json_schema is answered with a bare HTTP 500."""
    ignores_max_completion_tokens: bool = False
    """The reply is capped by `max_tokens` only."""
    thinks: bool = False
    """A reply not constrained to JSON starts with a `<think>` block."""
    prose: bool = False
    """A reply not constrained to JSON has a sentence before and after the JSON."""
    raw_control_characters: bool = False
    """Newlines and tabs inside JSON strings come out raw, even under constrained decoding."""


LLAMA_CPP_PYTHON = Quirks(
    "llama-cpp-python",
    json_schema_fails=True,
    ignores_max_completion_tokens=True,
    prose=True,
    raw_control_characters=True,
)
OLLAMA = Quirks("ollama", ignores_max_completion_tokens=True, thinks=True)
Model = Callable[[Recorded], tuple[str, Usage]]
"""What a model says to a request, and the tokens it reports."""


@dataclass
class LocalServer:
    """A responder for FakeServer: `model`'s answers served as a server with `quirks` serves them.
    `caps` lists, per request answered, the token limit the server honoured (None: uncapped)."""

    model: Model
    quirks: Quirks
    caps: list[int | None] = field(default_factory=list)

    def __call__(self, request: Recorded) -> Reply:
        body = request.body
        response_format = body.get("response_format") or {}
        if self.quirks.json_schema_fails and response_format.get("type") == "json_schema":
            return Reply(500, {"error": {"message": "Internal Server Error", "code": 500}})
        self.caps.append(self._cap(body))
        text, usage = self.model(request)
        is_json = text.lstrip().startswith("{")
        if is_json and self.quirks.raw_control_characters:
            text = text.replace("\\n", "\n").replace("\\t", "\t")
        forced = body.get("tool_choice")
        if isinstance(forced, dict):
            call = {
                "id": "call_0",
                "type": "function",
                "function": {"name": forced["function"]["name"], "arguments": text},
            }
            message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}
            return _completion(message, "tool_calls", usage)(request)
        if is_json and not response_format:
            text = self._around(text)
        return OpenAIApi().text_reply(text, usage)(request)

    def _cap(self, body: dict[str, Any]) -> int | None:
        cap: int | None = body.get("max_tokens")
        if cap is None and not self.quirks.ignores_max_completion_tokens:
            cap = body.get("max_completion_tokens")
        return cap

    def _around(self, text: str) -> str:
        if self.quirks.prose:
            text = f"Here is the JSON you asked for:\n{text}\nI hope this helps!"
        if self.quirks.thinks:
            text = f"<think>\nThe answer needs {{ and }} in the right places.\n</think>\n\n{text}"
        return text
