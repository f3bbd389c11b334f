"""A run's events as Server-Sent Events: the trace from the incremental `progress` query (which
adds nothing to history), each event once and in order with its index in the trace as its id;
the run's model tokens, out of band and without an id; and a small progress message whenever
the phase, counts or pending waits change. A closed run's rest comes from its history (no
worker needed). The stream ends with an `end` message once the run has ended."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from pydantic import BaseModel
from sse_starlette import ServerSentEvent

from durable_harness.client import Run
from durable_harness.exceptions import HarnessError
from harness.engine.progress_page import ProgressPage
from harness.engine.trace import TraceEvent
from starter.web.tokens import TokenChunk, TokenHub

RETRY_MS = 1000
"""How soon a browser's EventSource reconnects after the connection drops (the spec's default
is a few seconds)."""


class Ended(BaseModel):
    """The last message of a stream: the run has ended (or cannot be followed: `error`)."""

    next: int
    error: str | None = None


def trace_message(index: int, event: TraceEvent) -> ServerSentEvent:
    return ServerSentEvent(data=event.model_dump_json(), event="trace", id=str(index))


def token_message(chunk: TokenChunk) -> ServerSentEvent:
    return ServerSentEvent(
        data=chunk.model_dump_json(include={"node", "call", "seq", "text"}), event="token"
    )


def _progress_json(page: ProgressPage) -> str:
    """The page without its events: phase, attempt, counts and the waits open now."""
    return page.model_dump_json(include={"phase", "attempt", "counts", "pending"})


async def closed_run_events(run: Run, after: int) -> AsyncIterator[ServerSentEvent]:
    """A run whose workflow has closed: the rest of its trace, rebuilt from history."""
    yield ServerSentEvent(comment="closed run", retry=RETRY_MS)
    trace = await run.trace()
    for index in range(after, len(trace)):
        yield trace_message(index, trace[index])
    yield ServerSentEvent(data=Ended(next=max(after, len(trace))).model_dump_json(), event="end")


async def live_run_events(run: Run, hub: TokenHub, after: int) -> AsyncIterator[ServerSentEvent]:
    """A running run: its trace after `after` and its tokens as they come, until it ends."""
    merged: asyncio.Queue[ProgressPage | TokenChunk | Ended] = asyncio.Queue()
    async with hub.follow(run.run_id) as tokens:  # before the first message: none missed after
        yield ServerSentEvent(comment="following", retry=RETRY_MS)
        pumps = [
            asyncio.create_task(_pump_pages(run, after, merged)),
            asyncio.create_task(_pump_tokens(tokens, merged)),
        ]
        try:
            last_progress = ""
            while True:
                item = await merged.get()
                if isinstance(item, TokenChunk):
                    yield token_message(item)
                elif isinstance(item, Ended):
                    yield ServerSentEvent(data=item.model_dump_json(), event="end")
                    return
                else:
                    first = item.next - len(item.events)
                    for offset, event in enumerate(item.events):
                        yield trace_message(first + offset, event)
                    progress = _progress_json(item)
                    if progress != last_progress:
                        last_progress = progress
                        yield ServerSentEvent(data=progress, event="progress")
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)


async def _pump_pages(
    run: Run, after: int, merged: asyncio.Queue[ProgressPage | TokenChunk | Ended]
) -> None:
    next_index = after
    try:
        async for page in run.follow(after=after):
            next_index = page.next
            await merged.put(page)
    except HarnessError as error:
        await merged.put(Ended(next=next_index, error=error.message))
        return
    await merged.put(Ended(next=next_index))


async def _pump_tokens(
    tokens: asyncio.Queue[TokenChunk], merged: asyncio.Queue[ProgressPage | TokenChunk | Ended]
) -> None:
    while True:
        await merged.put(await tokens.get())
