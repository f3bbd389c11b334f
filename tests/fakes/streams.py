"""A full reply of a fake API, served as the stream of events the real API sends for a request
with `"stream": true`: built from the same JSON body the fake gives an unstreamed request, so
every reply kind (text, tool calls, cut off, refusal, thinking blocks, usage with cached and
reasoning tokens) streams with no fake of its own.

Chat Completions: a `chat.completion.chunk` per piece of each message field (tool calls: the
call's head, then pieces of its arguments), a final chunk with the finish reason, and one with
the usage when the request asked for it (`stream_options.include_usage`), then `[DONE]`.
Anthropic Messages: message_start, content_block_start / content_block_delta (pieces) /
content_block_stop per block, message_delta (stop reason, usage), message_stop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

_CHUNK_FIELDS = ("id", "created", "model", "system_fingerprint", "service_tier")


def pieces(text: str, size: int) -> list[str]:
    """`text` in pieces of `size` characters (one empty piece for empty text)."""
    return [text[at : at + size] for at in range(0, len(text), size)] or [""]


def sse_events(request: dict[str, Any], body: Any, size: int) -> list[bytes] | None:
    """The SSE stream for `body`, the unstreamed reply to `request`; None if it is no reply of
    either API (then it is sent as it is)."""
    if not isinstance(body, dict):
        return None
    if body.get("object") == "chat.completion":
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        chunks = chat_chunks(body, size, include_usage=include_usage)
        return [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks] + [
            b"data: [DONE]\n\n"
        ]
    if body.get("type") == "message":
        return [
            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
            for event in message_events(body, size)
        ]
    return None


def error_event(route: str) -> bytes:
    """The event an API sends when it fails mid-stream (an overload)."""
    error = {"type": "overloaded_error", "message": "Overloaded"}
    if route.endswith("/chat/completions"):
        return f"data: {json.dumps({'error': error})}\n\n".encode()
    return f"event: error\ndata: {json.dumps({'type': 'error', 'error': error})}\n\n".encode()


def chat_chunks(
    body: dict[str, Any], size: int, *, include_usage: bool
) -> Iterator[dict[str, Any]]:
    head = {key: body[key] for key in _CHUNK_FIELDS if key in body}
    head["object"] = "chat.completion.chunk"
    extras = {
        key: value
        for key, value in body.items()
        if key not in (*_CHUNK_FIELDS, "object", "choices", "usage")
    }

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": index, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**head, "choices": [choice]}

    first = True
    for choice in body["choices"]:
        index = choice["index"]
        message = choice["message"]
        opening = chunk(index, {"role": message.get("role", "assistant")})
        yield {**opening, **extras} if first else opening
        first = False
        for key, value in message.items():
            if key == "role" or value is None:
                continue
            if key == "tool_calls":
                yield from _tool_call_chunks(index, value, size, chunk)
            elif isinstance(value, str):
                for piece in pieces(value, size):
                    yield chunk(index, {key: piece})
            else:
                yield chunk(index, {key: value})
        yield chunk(index, {}, choice["finish_reason"])
    if include_usage and body.get("usage") is not None:
        yield {**head, "choices": [], "usage": body["usage"]}


def _tool_call_chunks(
    index: int, calls: list[dict[str, Any]], size: int, chunk: Any
) -> Iterator[dict[str, Any]]:
    for position, call in enumerate(calls):
        function = call["function"]
        call_head = {
            "index": position,
            "id": call["id"],
            "type": call["type"],
            "function": {"name": function["name"], "arguments": ""},
        }
        yield chunk(index, {"tool_calls": [call_head]})
        for piece in pieces(function["arguments"], size):
            yield chunk(
                index, {"tool_calls": [{"index": position, "function": {"arguments": piece}}]}
            )


_STOP_FIELDS = ("stop_reason", "stop_sequence", "stop_details")


def message_events(body: dict[str, Any], size: int) -> Iterator[dict[str, Any]]:
    usage = dict(body.get("usage") or {})
    started = {key: value for key, value in body.items() if key not in ("content", "usage")}
    started.update(content=[], stop_reason=None, stop_sequence=None)
    started.pop("stop_details", None)
    opening_usage = {key: value for key, value in usage.items() if key != "output_tokens_details"}
    yield {
        "type": "message_start",
        "message": {**started, "usage": {**opening_usage, "output_tokens": 1}},
    }
    for index, block in enumerate(body["content"]):
        yield from _block_events(index, block, size)
    delta = {key: body[key] for key in _STOP_FIELDS if key in body}
    yield {"type": "message_delta", "delta": delta, "usage": usage}
    yield {"type": "message_stop"}


def _block_events(index: int, block: dict[str, Any], size: int) -> Iterator[dict[str, Any]]:
    kind = block["type"]
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        start = {**block, "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in pieces(block["text"], size)]
    elif kind == "thinking":
        start = {**block, "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": piece}
            for piece in pieces(block["thinking"], size)
        ]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "tool_use":
        start = {**block, "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": piece}
            for piece in pieces(json.dumps(block["input"]), size)
        ]
    else:
        start = block
    yield {"type": "content_block_start", "index": index, "content_block": start}
    for delta in deltas:
        yield {"type": "content_block_delta", "index": index, "delta": delta}
    yield {"type": "content_block_stop", "index": index}
