"""How much one worker process takes on at once: the knobs of `bench/README.md`'s "Worker
tuning", read from HARNESS_* variables (infra.settings), each the SDK's default unless set."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from infra.settings import Settings

MAX_CONCURRENT_ACTIVITIES = 200
"""Activity slots of each of the worker's two Temporal workers (runs' tools, model calls)."""


@dataclass(frozen=True)
class WorkerTuning:
    max_concurrent_activities: int = MAX_CONCURRENT_ACTIVITIES
    max_cached_workflows: int | None = None
    """The sticky cache: runs kept in memory between their workflow tasks (SDK: 1,000)."""
    workflow_task_pollers: int | None = None
    """Concurrent workflow-task polls (SDK: 5)."""
    activity_task_pollers: int | None = None
    """Concurrent activity-task polls of each worker (SDK: 5)."""
    sticky_timeout_seconds: float | None = None
    """How long a run's workflow task waits on the sticky queue of the worker caching the run
    before it goes to the task queue, for any worker (SDK: 10 s)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> WorkerTuning:
        return cls(
            max_concurrent_activities=settings.max_concurrent_activities
            or MAX_CONCURRENT_ACTIVITIES,
            max_cached_workflows=settings.max_cached_workflows,
            workflow_task_pollers=settings.workflow_task_pollers,
            activity_task_pollers=settings.activity_task_pollers,
            sticky_timeout_seconds=settings.sticky_timeout_seconds,
        )

    def run_worker(self) -> dict[str, Any]:
        """Keyword arguments of the worker that runs the workflows and their tools."""
        options: dict[str, Any] = {"max_concurrent_activities": self.max_concurrent_activities}
        if self.max_cached_workflows is not None:
            options["max_cached_workflows"] = self.max_cached_workflows
        if self.workflow_task_pollers is not None:
            options["max_concurrent_workflow_task_polls"] = self.workflow_task_pollers
        if self.activity_task_pollers is not None:
            options["max_concurrent_activity_task_polls"] = self.activity_task_pollers
        if self.sticky_timeout_seconds is not None:
            options["sticky_queue_schedule_to_start_timeout"] = timedelta(
                seconds=self.sticky_timeout_seconds
            )
        return options

    def llm_worker(self) -> dict[str, Any]:
        """Keyword arguments of the worker of model calls (activities only)."""
        options: dict[str, Any] = {"max_concurrent_activities": self.max_concurrent_activities}
        if self.activity_task_pollers is not None:
            options["max_concurrent_activity_task_polls"] = self.activity_task_pollers
        return options
