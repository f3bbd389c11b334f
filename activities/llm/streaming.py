"""Model calls that stream their replies, returning the same object a non-streamed call does.

Why stream: a reply arrives chunk by chunk, so the call can tell a live slow server (chunks keep
coming: the call runs up to the role's timeout) from a dead or stuck one (nothing for the idle
timeout: abandoned as TIMEOUT); each chunk heartbeats the activity (`heartbeats.progress`); and
a cancelled activity closes the response, so the server sees the disconnect and stops
generating (a single-slot local server is free for the retry; a hosted API stops billing).

The role's timeout bounds the whole call, the idle timeout each wait for a chunk (the HTTP read
timeout). A server that answers a streamed request with plain JSON is accepted as it is.
`HARNESS_LLM_STREAM=off` sends the calls unstreamed, as before.

The reply's text also goes, piece by piece, to the followers of the run or session when the
activity asked for it (activities.token_stream: the writer's and the agent's turns, when the
worker has a web app to post to); a call made without that sends nothing anywhere.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anthropic
import httpx2 as httpx  # the HTTP client both SDKs are built on
import openai
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawContentBlockDeltaEvent, TextDelta
from anthropic.types.parsed_message import ParsedMessage
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion

from activities.heartbeats import progress
from activities.token_stream import reply_tokens

T = TypeVar("T")


class StreamTimeout(Exception):
    """A streamed call ran out of time: `seconds` is the limit it hit (the call's, or the idle
    timeout between chunks)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no reply within {seconds:g} s")
        self.seconds = seconds


class StreamLost(Exception):
    """The connection broke while the reply was streaming."""


class StreamFailed(Exception):
    """The server sent an error event in place of the rest of the reply (an overload, say):
    `body` is the error it sent."""

    def __init__(self, body: object) -> None:
        super().__init__(f"the stream ended with an error: {body}")
        self.body = body


async def openai_completion(
    client: openai.AsyncOpenAI,
    *,
    stream: bool,
    timeout: float,
    idle_timeout: float,
    **params: Any,
) -> ChatCompletion:
    """`client.chat.completions.create(**params)`, streamed when `stream`. Raises what the SDK
    raises, and StreamTimeout when the call or a wait for a chunk outlasts its limit."""
    if not stream:
        completion: ChatCompletion = await client.chat.completions.create(**params, timeout=timeout)
        return completion
    async with reply_tokens() as said, _deadline(timeout, idle_timeout):
        chunks = await client.chat.completions.create(
            **params,
            stream=True,
            stream_options={"include_usage": True},
            timeout=_http_timeout(timeout, idle_timeout),
        )
        async with chunks:
            if not _is_event_stream(chunks.response):
                return ChatCompletion.model_validate(json.loads(await chunks.response.aread()))
            state: ChatCompletionStreamState[None] = ChatCompletionStreamState()
            async for chunk in _beating(chunks):
                state.handle_chunk(chunk)
                if said is not None and chunk.choices:
                    said(chunk.choices[0].delta.content)
    # the snapshot, not get_final_completion(): that one raises on a cut-off or filtered reply
    snapshot = state.current_completion_snapshot.model_dump(
        exclude={"choices": {"__all__": {"message": {"parsed"}}}}
    )
    return ChatCompletion.model_validate(snapshot)


async def anthropic_message(
    client: anthropic.AsyncAnthropic,
    *,
    stream: bool,
    timeout: float,
    idle_timeout: float,
    **params: Any,
) -> Message:
    """`client.messages.create(**params)`, streamed when `stream`; as `openai_completion`."""
    if not stream:
        message: Message = await client.messages.create(**params, timeout=timeout)
        return message
    async with reply_tokens() as said, _deadline(timeout, idle_timeout):
        events = await client.messages.create(
            **params, stream=True, timeout=_http_timeout(timeout, idle_timeout)
        )
        async with events:
            if not _is_event_stream(events.response):
                return Message.model_validate(json.loads(await events.response.aread()))
            snapshot: ParsedMessage[None] | None = None
            buffers: dict[int, bytes] = {}
            async for event in _beating(events):
                snapshot = accumulate_event(
                    event=event, current_snapshot=snapshot, json_bufs=buffers
                )
                if said is not None and isinstance(event, RawContentBlockDeltaEvent):
                    said(event.delta.text if isinstance(event.delta, TextDelta) else None)
    if snapshot is None:
        raise anthropic.APIResponseValidationError(
            events.response, None, message="the stream ended before its message started"
        )
    return snapshot


def _http_timeout(timeout: float, idle_timeout: float) -> httpx.Timeout:
    """The whole call's limit for connecting and sending, the idle timeout for each read."""
    return httpx.Timeout(timeout, read=min(idle_timeout, timeout))


def _is_event_stream(response: httpx.Response) -> bool:
    kind: str = response.headers.get("content-type", "")
    return kind.startswith("text/event-stream")


async def _beating(items: AsyncIterator[T]) -> AsyncIterator[T]:
    """`items`, heartbeating the activity (throttled) as each arrives. An error event is
    StreamFailed (the SDKs raise it as a generic API error, or as a status error of status 200)."""
    try:
        async for item in items:
            progress()
            yield item
    except (openai.APIConnectionError, anthropic.APIConnectionError):
        raise
    except (openai.APIError, anthropic.APIStatusError) as error:
        raise StreamFailed(error.body) from None


@asynccontextmanager
async def _deadline(timeout: float, idle_timeout: float) -> AsyncIterator[None]:
    """The call ends within `timeout`; a read that waits `idle_timeout` for a chunk ends it too
    (both as StreamTimeout). A connection lost mid-stream is StreamLost."""
    try:
        async with asyncio.timeout(timeout):
            yield
    except TimeoutError:
        raise StreamTimeout(timeout) from None
    except (httpx.ReadTimeout, openai.APITimeoutError, anthropic.APITimeoutError):
        # the SDKs wrap a read timeout (the idle one) as theirs; connecting has the whole
        # call's time, which the asyncio timeout ends first
        raise StreamTimeout(min(idle_timeout, timeout)) from None
    except httpx.TimeoutException:
        raise StreamTimeout(timeout) from None
    except httpx.TransportError:
        raise StreamLost() from None
