"""What a follower of a running run reads once per poll: the trace events recorded since its
last read (in the order recorded, so no event is missed or read twice), with the run's phase,
counts, pressure and pending waits. A query: reading it adds nothing to the run's history, and
each read carries only what is new."""

from __future__ import annotations

from pydantic import BaseModel, Field

from harness.engine.run import RunCounts, RunPhase
from harness.engine.trace import TraceEvent
from harness.waits.wait_book import Wait

MAX_PAGE_EVENTS = 2000
"""The most events one read returns; a follower that fell further behind reads again."""


class ProgressPage(BaseModel):
    events: list[TraceEvent] = Field(description="Events recorded after the `after` asked for.")
    next: int = Field(ge=0, description="Ask for events after this next time.")
    phase: RunPhase
    attempt: int
    counts: RunCounts
    pressure: float
    pending: list[Wait] = Field(description="The waits open now.")


def page_after(recorded: list[TraceEvent], after: int) -> tuple[list[TraceEvent], int]:
    """The events recorded after the first `after` (at most MAX_PAGE_EVENTS), and the next
    `after`. An `after` past the end reads nothing."""
    start = min(max(after, 0), len(recorded))
    events = recorded[start : start + MAX_PAGE_EVENTS]
    return events, start + len(events)
