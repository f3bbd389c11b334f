"""Fencing: a writer that has been superseded writes no more to a task.

A writer that can be replaced while its work is still in flight (a session's slice, whose
activity may outlive it) writes with a `WriterFence`: its holder and its epoch. A task's
gateway keeps, per holder, the highest epoch it has applied a write of, and refuses a write
whose epoch is older: that holder has moved on since, so what the older writer would write
rests on a stale view. An equal epoch is taken (a slice writes many times); a newer one raises
the mark, never lowers it. A refused write changes nothing, the mark included.

The marks are bounded: a task keeps the holders that wrote last, MAX_FENCED_HOLDERS of them,
and forgets the one that wrote longest ago (a writer of a holder forgotten is not refused).
Writes without a fence (people, systems, runs outside sessions) are not fenced. Reads are not.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.governance.work import WriterFence

MAX_FENCED_HOLDERS = 64
"""Holders a task keeps a mark for: bounded, since the marks travel in the task's state."""


def stale_writer_problem(
    marks: Mapping[str, int], fence: WriterFence | None, task_id: str
) -> str | None:
    """Why a write with `fence` is refused: its holder has written to the task with a newer
    epoch since. None for a write without a fence, a first one, an equal or a newer epoch."""
    if fence is None:
        return None
    highest = marks.get(fence.holder)
    if highest is None or fence.epoch >= highest:
        return None
    return (
        f"stale writer: {fence.holder} epoch {fence.epoch} is older than epoch {highest}, "
        f"which has written to task {task_id} since; nothing was changed"
    )


def mark_written(marks: dict[str, int], fence: WriterFence) -> None:
    """A write with `fence` was applied: its holder's mark rises to its epoch (never falls),
    and it becomes the holder that wrote last; past the bound, the one that wrote longest ago
    is forgotten."""
    highest = max(marks.pop(fence.holder, fence.epoch), fence.epoch)
    marks[fence.holder] = highest
    while len(marks) > MAX_FENCED_HOLDERS:
        del marks[next(iter(marks))]
