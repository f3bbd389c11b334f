"""The patches of the scope graph (HarnessScope); see the registry, workflows.patches."""

from __future__ import annotations

from datetime import date

from workflows.patches.patch import Patch

STATUS_READ_PATCH = "scope-reads-task-status"
"""0.10: a `task_status` signal is only the news: the graph takes the status the task's own
workflow holds, read by an activity (anyone could signal a task DONE and free its dependants).
Asked where the scope takes the signal."""
KEYS_TOLD_PATCH = "scope-tells-tasks-of-new-keys"
"""0.10: a scope whose actor keys change tells each unfinished task, which reads them (no
history before 0.10 holds a key change: asked where the scope sends its signals)."""

PATCHES: tuple[Patch, ...] = (
    Patch(
        KEYS_TOLD_PATCH,
        date(2026, 12, 3),
        "5f16958",
        "0.10.0",
        "A scope whose actor keys change tells each unfinished task to read them.",
    ),
    Patch(
        STATUS_READ_PATCH,
        date(2026, 12, 3),
        "7237101",
        "0.10.0",
        "A task_status signal is the news only: the scope reads the task's status from its "
        "workflow, so a forged signal cannot free a task's dependants.",
    ),
)
