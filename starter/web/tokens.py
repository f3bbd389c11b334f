"""Model tokens, out of band: the activities that receive a model's reply as it streams post its
text here in small batches (`POST /internal/tokens`), and each follower of that run or session
gets them as they come. Never in history: a follower that connects late, or a restarted web app,
has missed them, and the run's trace (the durable record) still has the whole reply.

One hub per web app process. A stream is keyed by the workflow id the call ran for (a run's
id, or a session's `session:SCOPE:ID`). The chunks' model is the domain's
(harness.engine.live_tokens): the workers that post them never import the web app."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from harness.engine.live_tokens import TokenBatch, TokenChunk

__all__ = ["SUBSCRIBER_QUEUE", "TokenBatch", "TokenChunk", "TokenHub"]

SUBSCRIBER_QUEUE = 4096
"""Chunks kept for one slow follower; past that its oldest are dropped (a view, not a record)."""


class TokenHub:
    """Fans chunks out to the followers of their stream, in the order they were published."""

    def __init__(self) -> None:
        self._followers: dict[str, set[asyncio.Queue[TokenChunk]]] = defaultdict(set)

    def publish(self, chunk: TokenChunk) -> None:
        for queue in self._followers.get(chunk.stream, ()):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(chunk)

    @asynccontextmanager
    async def follow(self, stream: str) -> AsyncIterator[asyncio.Queue[TokenChunk]]:
        """A queue that receives the stream's chunks published while the block runs."""
        queue: asyncio.Queue[TokenChunk] = asyncio.Queue(SUBSCRIBER_QUEUE)
        self._followers[stream].add(queue)
        try:
            yield queue
        finally:
            followers = self._followers[stream]
            followers.discard(queue)
            if not followers:
                del self._followers[stream]

    def following(self, stream: str) -> int:
        return len(self._followers.get(stream, ()))
