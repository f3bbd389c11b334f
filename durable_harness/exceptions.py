"""What the client (`Harness`, `Run`) raises: one line that says what went wrong and, for bad
input, what to fix. (`durable_harness.errors` is the other side: what a tool raises.)

    HarnessError          every one of them; `str(error)` is the line
    ├── InvalidInput      what was asked cannot be done as asked (a bad goal, plan, key, id)
    │   └── TaskRefused   a task's, scope's or rules' gateway refused the command
    ├── NotFound          no run (or task) with that id on this server
    ├── Unavailable       the server cannot be reached, or no worker answers for the run
    └── RunFailed         the run failed inside Temporal, or refused what was delivered

The `harness` CLI shows the line and exits 2 for InvalidInput and NotFound, 3 for Unavailable
and 1 for RunFailed (docs/cli.md, "Bad input and exit codes").
"""

from __future__ import annotations


class HarnessError(Exception):
    """A failure the client reports in one line, never a stack trace."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(HarnessError):
    """What was asked cannot be done as asked; the line says what to fix. Nothing changed."""


class TaskRefused(InvalidInput):
    """The gateway of a task, a scope's task graph or its rules refused the command (an actor
    not entitled, a missing signature, a gate that fails, a finished task); the line is the
    gateway's reason. Nothing changed."""


class NotFound(HarnessError):
    """No run (or task) with that id on the server this client is connected to."""


class Unavailable(HarnessError):
    """The Temporal server cannot be reached, or no worker answers for the run: try again once
    it is up."""


class RunFailed(HarnessError):
    """The run failed inside Temporal (terminated, timed out, not replayable), or it refused a
    delivery."""
