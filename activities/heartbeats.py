"""Heartbeats while an activity waits on something slow (a tool, a model), so that a dead
worker or a cancelled run is noticed within the heartbeat timeout, not the activity's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from temporalio import activity

HEARTBEAT_EVERY_SECONDS = 5.0
"""Well inside the workflow's heartbeat timeout (30 s) for every activity that heartbeats."""

T = TypeVar("T")


async def with_heartbeats(work: Awaitable[T], details: Sequence[object] = ()) -> T:
    """Await `work`, heartbeating while it runs; cancelling the activity cancels the work.
    Each heartbeat carries `details`, so what the attempt recorded survives them."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=HEARTBEAT_EVERY_SECONDS)
            if done:
                return task.result()
            activity.heartbeat(*details)
    finally:
        task.cancel()
