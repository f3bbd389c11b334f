"""Heartbeats while an activity waits on something slow (a tool, a model), so that a dead
worker or a cancelled run is noticed within the heartbeat timeout, not the activity's.

Work awaited by `with_heartbeats` may also report progress (`progress()`, once per streamed
chunk of a model's reply): a heartbeat with the same details, at most every
`PROGRESS_EVERY_SECONDS`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from temporalio import activity

HEARTBEAT_EVERY_SECONDS = 5.0
"""Well inside the workflow's heartbeat timeout (30 s) for every activity that heartbeats."""

PROGRESS_EVERY_SECONDS = 1.0
"""The most often work's progress heartbeats (a stream's chunks arrive far more often)."""

T = TypeVar("T")
Heartbeat = Callable[..., None]


@dataclass
class _Beating:
    details: Sequence[object]
    heartbeat: Heartbeat
    last: float = float("-inf")


_beating: ContextVar[_Beating | None] = ContextVar("harness_heartbeating", default=None)


async def with_heartbeats(
    work: Awaitable[T], details: Sequence[object] = (), heartbeat: Heartbeat = activity.heartbeat
) -> T:
    """Await `work`, heartbeating while it runs; cancelling the activity cancels the work.
    Each heartbeat carries `details`, so what the attempt recorded survives them; the work's
    `progress()` heartbeats carry them too. `heartbeat`: how to send one (tests pass a fake)."""
    token = _beating.set(_Beating(tuple(details), heartbeat))
    try:
        task = asyncio.ensure_future(work)  # copies the context: the work sees `_beating`
    finally:
        _beating.reset(token)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=HEARTBEAT_EVERY_SECONDS)
            if done:
                return task.result()
            heartbeat(*details)
    finally:
        task.cancel()


def progress() -> None:
    """The work awaited by `with_heartbeats` made progress: heartbeat with its details, unless
    one was sent less than PROGRESS_EVERY_SECONDS ago. Outside `with_heartbeats`, nothing (a
    heartbeat without the attempt's details would lose them)."""
    beating = _beating.get()
    if beating is None:
        return
    now = time.monotonic()
    if now - beating.last < PROGRESS_EVERY_SECONDS:
        return
    beating.last = now
    beating.heartbeat(*beating.details)
