"""When a long-lived workflow's history is full enough to go on in a fresh one (continue-as-new):
when Temporal suggests it (its own count and size limits), or past the workflow's own bound."""

from __future__ import annotations

from temporalio import workflow


def history_full(most_events: int) -> bool:
    info = workflow.info()
    return info.is_continue_as_new_suggested() or info.get_current_history_length() >= most_events
