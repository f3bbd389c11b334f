"""A model's reply as it streams, out of band: what a worker posts to `harness web`
(`POST /internal/tokens`) and what the web app hands each follower of the run or session.

Never in history: the reply's whole text is in the activity's result, the durable record; these
chunks are a view of it while it is written, which a follower that connects late has missed.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, Field

TOKENS_PATH: Final = "/internal/tokens"
"""Where a worker posts its batches, under the web app's URL (HARNESS_WEB_URL)."""
MAX_BATCH_CHUNKS: Final = 10_000


class TokenChunk(BaseModel):
    """A piece of a model's reply as it streams."""

    stream: str = Field(description="The workflow id the call ran for: a run's or a session's.")
    node: str | None = Field(default=None, description="The node whose call it is, if any.")
    call: str = Field(
        description="One model reply of one activity attempt: the same for all its chunks."
    )
    seq: int = Field(ge=0, description="The chunk's place in its call's reply, from 0.")
    text: str


class TokenBatch(BaseModel):
    """What a worker posts: the chunks it gathered since its last post, in order."""

    chunks: list[TokenChunk] = Field(max_length=MAX_BATCH_CHUNKS)
