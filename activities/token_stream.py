"""Model tokens, out of band: the text of a writer's or an agent turn's reply goes to `harness
web` as it streams, for the followers of the run or session (harness.engine.live_tokens).

Three parts:
- `TokenPoster`, one per worker process, built when HARNESS_WEB_URL is set: it gathers chunks
  and posts them in batches (`POST /internal/tokens`, every FLUSH_SECONDS or BATCH_CHUNKS
  chunks) from a background task of its own, in order. A web app that is down or refuses costs
  one warning in the log (and another once it came back and went again) and drops the chunks
  for RETRY_SECONDS: the model call never waits on it, and never fails for it.
- `live_replies`, which an activity whose replies are text for people (the writing tools, the
  agent's turns; never the planner or the judge, whose replies are JSON) wraps around its call.
- `reply_tokens`, which the code that reads a streamed reply (activities.llm.streaming, the
  offline provider) wraps around one reply, handing each piece of text to what it yields. At
  the reply's end it waits for its chunks to be posted, at most CLOSE_WAIT_SECONDS, so that a
  follower has the tokens before the workflow records the reply.

No HARNESS_WEB_URL: no poster, no task, no client; `reply_tokens` yields None at the cost of
reading a context variable.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import httpx2 as httpx
import structlog
from temporalio import activity

from harness.engine.live_tokens import MAX_BATCH_CHUNKS, TOKENS_PATH, TokenBatch, TokenChunk
from infra.settings import WebTarget, web_target

log = structlog.get_logger()

FLUSH_SECONDS = 0.05
"""How long chunks gather before they are posted: a follower sees words, not letters, at a
post per 50 ms per worker at most."""
BATCH_CHUNKS = 200
"""Chunks that are posted at once without waiting for FLUSH_SECONDS."""
PENDING_CHUNKS = 20_000
"""Chunks a poster keeps while a post is under way; past that, new ones are dropped."""
POST_TIMEOUT_SECONDS = 2.0
RETRY_SECONDS = 10.0
"""After a post failed, chunks are dropped this long before the web app is tried again."""
CLOSE_WAIT_SECONDS = 1.0
"""The longest a reply's end waits for its last chunks to be posted."""


class TokenPoster:
    """Posts chunks to the web app in batches, in the order they were added."""

    def __init__(
        self,
        target: WebTarget,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        flush_seconds: float = FLUSH_SECONDS,
        retry_seconds: float = RETRY_SECONDS,
    ) -> None:
        """`transport`: how to reach the app (tests pass one; None: the network)."""
        self.url = target.url + TOKENS_PATH
        self._headers = {"authorization": f"Bearer {target.token}"} if target.token else {}
        self._transport = transport
        self._flush_seconds = flush_seconds
        self._retry_seconds = retry_seconds
        self._pending: list[TokenChunk] = []
        self._added = 0  # chunks taken, ever
        self._settled = 0  # chunks posted or dropped, ever
        self._down_until = -math.inf
        self._warned = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._urgent = asyncio.Event()
        self._progress = asyncio.Condition()

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> TokenPoster | None:
        """The poster HARNESS_WEB_URL (and HARNESS_WEB_TOKEN) name, or none."""
        target = web_target(env)
        return None if target is None else cls(target)

    def add(self, chunk: TokenChunk) -> None:
        """Take `chunk` to post; never waits, never raises."""
        if time.monotonic() < self._down_until or len(self._pending) >= PENDING_CHUNKS:
            return
        self._running()
        self._pending.append(chunk)
        self._added += 1
        self._wake.set()
        if len(self._pending) >= BATCH_CHUNKS:
            self._urgent.set()

    async def flushed(self, timeout: float = CLOSE_WAIT_SECONDS) -> None:
        """Until every chunk taken so far is posted (or dropped), `timeout` at most."""
        target = self._added
        if self._settled >= target or self._task is None:
            return
        self._urgent.set()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout), self._progress:
                await self._progress.wait_for(lambda: self._settled >= target)

    async def aclose(self) -> None:
        """Post what is left (CLOSE_WAIT_SECONDS at most), then stop the task and the client."""
        await self.flushed()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._client is not None:
            await self._client.aclose()
        self._task = self._client = self._loop = None

    def _running(self) -> None:
        """The background task, on the running loop (made anew if the loop changed)."""
        loop = asyncio.get_running_loop()
        if self._loop is loop and self._task is not None and not self._task.done():
            return
        self._loop = loop
        self._wake, self._urgent = asyncio.Event(), asyncio.Event()
        self._progress = asyncio.Condition()
        self._client = httpx.AsyncClient(transport=self._transport, timeout=POST_TIMEOUT_SECONDS)
        self._task = loop.create_task(self._run(), name="harness-token-poster")

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._urgent.wait(), self._flush_seconds)
            self._wake.clear()
            self._urgent.clear()
            while self._pending:
                batch = self._pending[:MAX_BATCH_CHUNKS]
                del self._pending[:MAX_BATCH_CHUNKS]
                await self._post(batch)
                self._settled += len(batch)
                async with self._progress:
                    self._progress.notify_all()

    async def _post(self, batch: list[TokenChunk]) -> None:
        if time.monotonic() < self._down_until or self._client is None:
            return
        body = TokenBatch(chunks=batch).model_dump_json(exclude_none=True)
        headers = {"content-type": "application/json", **self._headers}
        try:
            response = await self._client.post(self.url, content=body, headers=headers)
            problem = None if response.is_success else _refusal(response)
        except Exception as error:  # whatever it is, the call goes on
            problem = f"{type(error).__name__}: {error}".rstrip(": ")
        if problem is None:
            if self._warned:
                log.info("tokens.web_reachable", url=self.url)
                self._warned = False
            return
        self._down_until = time.monotonic() + self._retry_seconds
        if not self._warned:
            self._warned = True
            log.warning(
                "tokens.web_unreachable",
                url=self.url,
                problem=problem,
                dropped_for_seconds=self._retry_seconds,
            )


def _refusal(response: httpx.Response) -> str:
    if response.status_code == 401:
        return "HTTP 401: the web app needs its token (HARNESS_WEB_TOKEN)"
    return f"HTTP {response.status_code}"


@dataclass
class _LiveCall:
    """An activity attempt whose model replies go to followers."""

    poster: TokenPoster
    stream: str
    node: str | None
    call: str
    replies: int = field(default=0)


_live: ContextVar[_LiveCall | None] = ContextVar("harness_live_tokens", default=None)


@contextmanager
def live_replies(poster: TokenPoster | None, stream: str, node: str | None) -> Iterator[None]:
    """Model replies read in this block (and in the tasks it starts) go to `poster` for the
    followers of `stream` (a run's id, or a session's workflow id), as node `node`'s. Each
    reply's chunks carry one `call`: WORKFLOW/ACTIVITY#ATTEMPT.N, the N-th reply of the
    activity's attempt (the workflow being the one that ran the activity, a run's or a
    child's). No poster: nothing."""
    if poster is None:
        yield
        return
    info = activity.info()
    call = f"{info.workflow_id}/{info.activity_id}#{info.attempt}"
    token = _live.set(_LiveCall(poster, stream, node, call))
    try:
        yield
    finally:
        _live.reset(token)


class ReplyTokens:
    """One reply's text as it streams: call it with each piece, in order."""

    def __init__(self, live: _LiveCall) -> None:
        live.replies += 1
        self._live = live
        self._call = f"{live.call}.{live.replies}"
        self._seq = 0

    def __call__(self, text: str | None) -> None:
        if not text:
            return
        live = self._live
        chunk = TokenChunk(
            stream=live.stream, node=live.node, call=self._call, seq=self._seq, text=text
        )
        self._seq += 1
        live.poster.add(chunk)

    async def end(self) -> None:
        try:
            await self._live.poster.flushed()
        except Exception as error:  # a view's trouble never fails the call
            log.warning("tokens.flush_failed", problem=str(error))


@asynccontextmanager
async def reply_tokens() -> AsyncIterator[ReplyTokens | None]:
    """Where one reply's pieces go while it streams, or None when no follower can get them
    (no poster, or not in `live_replies`). A reply that ends well waits for its chunks to be
    posted (bounded); one cut short by an error does not wait."""
    live = _live.get()
    if live is None:
        yield None
        return
    said = ReplyTokens(live)
    yield said
    await said.end()


_WORDS = re.compile(r"\s*\S+\s*|\s+")


async def say_in_words(text: str) -> None:
    """`text` to followers word by word, as if it streamed (the offline provider's replies):
    the same pieces for the same text."""
    async with reply_tokens() as said:
        if said is not None:
            for word in _WORDS.findall(text):
                said(word)
