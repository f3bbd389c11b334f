"""`AgentRuntime`: what an agent runtime does for the harness, so a team's own runtime can run
sessions (and agent nodes) while the harness keeps tasks, waits, checkpoints, budgets, reviews
and gates.

A runtime runs inside workflow code (its methods are called by the session's workflow, on the
session's worker), so what it does must be deterministic: its model calls and tool calls are
activities (the built-in loop starts a child workflow; the pydantic-ai adapter uses
pydantic-ai's own Temporal integration), and its state is plain JSON.

The four things it does:
- `open`: start a conversation, or resume one from a checkpoint, with the new message (if any);
- `run_slice`: run one bounded slice (at most `request.limits`), and say how it ended;
- export its state: the `checkpoint` of every `SliceResult`, which the session keeps and
  carries over continue-as-new;
- `apply_wait_result`: a wait the slice ended on was answered; the result is the call's.

The protocol names no Temporal type, so an adapter's tests can check its pure parts offline.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from harness.engine.sessions import RuntimeCheckpoint, SliceRequest, SliceResult, WaitResult


@runtime_checkable
class AgentRuntime(Protocol):
    """An agent runtime, as a session (or an agent node) drives it."""

    name: str
    """How sessions name it (`SessionStart.runtime`), e.g. `builtin`, `pydantic-ai`."""

    def open(self, checkpoint: RuntimeCheckpoint | None, message: str | None) -> RuntimeCheckpoint:
        """A new conversation (no checkpoint), or the one resumed from `checkpoint`, with the
        user's `message` added when there is one."""
        ...

    async def run_slice(self, checkpoint: RuntimeCheckpoint, request: SliceRequest) -> SliceResult:
        """Run one bounded slice from `checkpoint`, in workflow code: at most
        `request.limits.max_turns` model turns and its budget. The result's `checkpoint` is the
        state exported after the slice; WAITING names the call that waits."""
        ...

    def apply_wait_result(
        self, checkpoint: RuntimeCheckpoint, result: WaitResult
    ) -> RuntimeCheckpoint:
        """The checkpoint with a delivered wait's result given to the call that waited."""
        ...
