"""The run's calls to the harness's own stores: its scope's contract and work context (the task
ledger), and memory (retrieval before planning, the episode at the end). Short reads and
writes, local activities in the run's own worker in the runs since the patches that made them
so (see placement.nearby_or_queued)."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from harness.engine.contracts import (
    MEMORY_RECORD_ACTIVITY,
    MEMORY_RETRIEVE_ACTIVITY,
    RUN_WORK_CONTEXT_ACTIVITY,
)
from harness.engine.messages import WorkContext, WorkContextRequest
from harness.recall.memory_records import (
    MemoryQuery,
    MemoryRecord,
    MemoryWritten,
    RetrievedMemories,
)
from workflows.activity_calls.placement import SHORT_RETRY, nearby_or_queued

WORK_CONTEXT_TIMEOUT = timedelta(seconds=30)
MEMORY_TIMEOUT = timedelta(seconds=30)
MEMORY_PATIENCE = timedelta(seconds=20)
"""Since the patch that bounds memory calls: a retrieval or an episode write gets 20 s in all,
its retries included (before, 30 s per attempt and three attempts). Each store bounds its own
statements well inside it (SQLite waits 5 s for a lock, Postgres gives a statement 10 s), so a
transient failure is retried within it; a store slower than that times out, and the run goes
on without it. An attempt gets the same 20 s: with 10 s per attempt, the local activities of
temporalio 1.35 were seen to time the second of three 5 s attempts out 10 s after the first
began, so a locked store's run was told "timed out" instead of "database is locked"."""
MEMORY_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)
"""A transient store failure (a lock, a dropped connection) is tried again, at most twice,
within MEMORY_PATIENCE."""


async def load_work_context(request: WorkContextRequest, *, local: bool) -> WorkContext:
    """`local`: read in the run's own worker, in the task that loads the catalog (a couple of
    queries: no task-queue round trip); runs of the first 0.5 builds read it as a plain
    activity."""
    return await nearby_or_queued(
        RUN_WORK_CONTEXT_ACTIVITY,
        request,
        WorkContext,
        local=local,
        timeout=WORK_CONTEXT_TIMEOUT,
        summary=f"contract of scope {request.scope}",
    )


async def retrieve_memories(
    query: MemoryQuery, *, local: bool = False, bounded: bool = False
) -> RetrievedMemories:
    """`local`: in the run's own worker, without a task-queue round trip (runs since the patch
    that made memory calls local; the store is shared, so any worker may). `bounded`: within
    MEMORY_PATIENCE (runs since the patch that bounds memory calls)."""
    timeout, patience, retry = _memory_timing(bounded)
    return await nearby_or_queued(
        MEMORY_RETRIEVE_ACTIVITY,
        query,
        RetrievedMemories,
        local=local,
        timeout=timeout,
        summary=f"memories of scope {query.scope} for the planner",
        patience=patience,
        retry=retry,
        every_failure=bounded,
    )


async def record_memory(
    record: MemoryRecord, *, local: bool = False, bounded: bool = False
) -> MemoryWritten:
    """`local`, `bounded`: as for retrieve_memories."""
    timeout, patience, retry = _memory_timing(bounded)
    return await nearby_or_queued(
        MEMORY_RECORD_ACTIVITY,
        record,
        MemoryWritten,
        local=local,
        timeout=timeout,
        summary=f"remember {record.id}",
        patience=patience,
        retry=retry,
        every_failure=bounded,
    )


def _memory_timing(bounded: bool) -> tuple[timedelta, timedelta | None, RetryPolicy]:
    """Per attempt, in all, and the retries of a memory call."""
    if bounded:
        return MEMORY_PATIENCE, MEMORY_PATIENCE, MEMORY_RETRY
    return MEMORY_TIMEOUT, None, SHORT_RETRY
