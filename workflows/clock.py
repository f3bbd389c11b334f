"""The run's clock: the one place a run reads time."""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow


class RunClock:
    """Workflow time while the workflow runs. Read afterwards (a run rebuilt by replaying its
    history, then inspected), the last workflow time the run saw."""

    def __init__(self) -> None:
        self.started = workflow.now()
        self._last = self.started

    def now(self) -> datetime:
        if workflow.in_workflow():
            self._last = workflow.now()
        return self._last

    def elapsed_seconds(self) -> float:
        return (self.now() - self.started).total_seconds()
