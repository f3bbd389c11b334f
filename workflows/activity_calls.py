"""The workflow's calls to its activities, by contract: a fixed name, a request model in and a
result model out. Nothing here imports the activities themselves, so loading the workflows
loads no LLM SDK, no scenario data and no telemetry.

Also: the timeouts and retry policies of each call, and the decoding of a failed call.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime, timedelta
from typing import Any, TypeVar

from pydantic import JsonValue, ValidationError
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    FailureError,
    RetryState,
    TimeoutError,
)

from harness.catalog.tools import CallPolicy, ToolCatalog, ToolSpec
from harness.core.errors import ErrorCode, is_retryable, parse_error_code
from harness.engine.contracts import (
    CANCEL_OWN_RUN_ACTIVITY,
    CHECK_REPORT_ACTIVITY,
    JUDGE_ACTIVITY,
    LIST_TOOLS_ACTIVITY,
    MEMORY_RECORD_ACTIVITY,
    MEMORY_RETRIEVE_ACTIVITY,
    PLAN_ACTIVITY,
    PROBE_OPERATION_ACTIVITY,
    RUN_TOOL_ACTIVITY,
    RUN_TOOLS_ACTIVITY,
    RUN_WORK_CONTEXT_ACTIVITY,
    VALIDATE_PLAN_ACTIVITY,
    llm_task_queue,
)
from harness.engine.messages import (
    AttemptTiming,
    BatchCallOutcome,
    CatalogRequest,
    JudgeCallRequest,
    JudgeCallResult,
    OperationProbe,
    PlanCheckRequest,
    PlanCheckResult,
    PlanRequest,
    PlanResponse,
    ProbeRequest,
    ProbeState,
    ReportCheckRequest,
    ReportCheckResult,
    RetryHeartbeat,
    ToolCallGroup,
    ToolCallGroupResult,
    ToolCallRequest,
    ToolCallResult,
    WorkContext,
    WorkContextRequest,
)
from harness.recall.memory_records import (
    MemoryQuery,
    MemoryRecord,
    MemoryWritten,
    RetrievedMemories,
)
from harness.waits.cancellation import OwnCancellation, OwnCancellationResult
from workflows.patches import LLM_QUEUE_PATCH, LOCAL_FAILURES_PATCH

R = TypeVar("R")

CATALOG_TIMEOUT = timedelta(seconds=30)
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
PLAN_TIMEOUT = timedelta(minutes=3)
TOOL_TIMEOUT = timedelta(minutes=2)
CHECK_TIMEOUT = timedelta(seconds=60)
LOCAL_TOOL_TIMEOUT = timedelta(seconds=10)
TOOL_HEARTBEAT_TIMEOUT = timedelta(seconds=30)
LLM_HEARTBEAT_TIMEOUT = timedelta(seconds=30)
"""The planner and the judge heartbeat while the model answers: a dead worker is seen in
seconds, not after the three-minute timeout of the call."""


NON_RETRYABLE_CODES = [code.value for code in ErrorCode if not is_retryable(code)]

TOOL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=3,
)
"""No list of error types: the tool activity marks each failure non-retryable from its own code
(activities.tool_runner), and the list would cost every node's history about 220 bytes."""
SIDE_EFFECT_RETRY = RetryPolicy(maximum_attempts=1)
"""A side effect that is not idempotent runs once: its outcome, if uncertain, is reconciled."""
PROBE_TIMEOUT = timedelta(seconds=30)
PROBE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_attempts=3,
    non_retryable_error_types=NON_RETRYABLE_CODES,
)
PLAN_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_attempts=3,
    non_retryable_error_types=NON_RETRYABLE_CODES,
)
SHORT_RETRY = RetryPolicy(
    maximum_attempts=3, non_retryable_error_types=[ErrorCode.UNKNOWN_SCENARIO.value]
)
MEMORY_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)
"""A transient store failure (a lock, a dropped connection) is tried again, at most twice,
within MEMORY_PATIENCE."""

_SUMMARY_VALUE_CHARS = 40
_SUMMARY_CHARS = 200


class ActivityFailure:
    """What a failed activity tells the workflow: a code, a message, how many attempts ran."""

    def __init__(self, error: ActivityError, max_attempts: int) -> None:
        cause = error.cause
        self.attempts = max_attempts
        self.timing: AttemptTiming | None = None
        self.retries: dict[int, datetime] = {}
        if isinstance(cause, ApplicationError):
            self.type = cause.type
            self.code = parse_error_code(cause.type)
            self.message = cause.message
            details = cause.details
            if details and isinstance(details[0], dict) and "attempt" in details[0]:
                self.attempts = int(details[0]["attempt"])
                self.timing = _timing(details[0].get("timing"))
                self.retries = self.timing.retries if self.timing else {}
        elif isinstance(cause, TimeoutError):
            self.type = ErrorCode.TIMEOUT.value
            self.code = ErrorCode.TIMEOUT
            self.message = f"timed out ({cause.type.name if cause.type else 'unknown'})"
            self.retries = RetryHeartbeat.read(cause.last_heartbeat_details)
        else:
            self.type = ErrorCode.TOOL_EXECUTION_FAILED.value
            self.code = ErrorCode.TOOL_EXECUTION_FAILED
            self.message = str(cause or error)


def _timing(raw: object) -> AttemptTiming | None:
    """The timing a failed attempt reported, if it reported one this code can read."""
    try:
        return AttemptTiming.model_validate(raw) if raw is not None else None
    except ValidationError:
        return None


def raise_if_cancelled(error: ActivityError) -> None:
    """An activity the run cancelled surfaces as ActivityError; turn it back into the run's
    cancellation so it ends CANCELLED, not as a failed phase."""
    if isinstance(error.cause, CancelledError):
        raise asyncio.CancelledError from error


def local_failures_are_activity_errors() -> bool:
    """Whether every failure of a local activity reaches its caller as an ActivityError, as a
    queued activity's does (runs since the patch; see _as_activity_error). Before it, an unknown
    scenario, a failed check, a local tool's or a cheap group's failure failed the workflow
    (Temporal status Failed, no RunResult) instead of the phase or the node.

    Each workflow that makes local activities asks first thing in its first task (as for
    llm_queue); later calls return that decision, whatever task they are made in."""
    return workflow.patched(LOCAL_FAILURES_PATCH)


async def _local(
    name: str, argument: Any, result_type: type[R], *, every_failure: bool = False, **options: Any
) -> R:
    """A local activity whose failure reaches the caller as an ActivityError: its timeout
    always, any other failure when `every_failure` (memory calls since the memory patch) or
    in runs since the patch for every local failure (see _as_activity_error)."""
    try:
        result: R = await workflow.execute_local_activity(
            name, argument, result_type=result_type, **options
        )
    except ActivityError:
        raise
    except TimeoutError as bare:
        raise _as_activity_error(bare, name) from bare
    except FailureError as bare:
        if not (every_failure or local_failures_are_activity_errors()):
            raise
        raise _as_activity_error(bare, name) from bare
    return result


async def load_catalog(scenario: str) -> ToolCatalog:
    return await _local(
        LIST_TOOLS_ACTIVITY,
        CatalogRequest(scenario=scenario),
        ToolCatalog,
        start_to_close_timeout=CATALOG_TIMEOUT,
        retry_policy=SHORT_RETRY,
        summary=f"catalog of {scenario}",
    )


async def _nearby_or_queued(
    name: str,
    argument: Any,
    result_type: type[R],
    *,
    local: bool,
    timeout: timedelta,
    summary: str,
    patience: timedelta | None = None,
    retry: RetryPolicy = SHORT_RETRY,
    every_failure: bool = False,
) -> R:
    """A short read or write of the harness's own stores: a local activity in the run's own
    worker (no task-queue round trip) when `local`, else a regular one, as runs recorded before
    made it. Retried as `retry` says; `patience` bounds all its attempts together.

    A local activity's failure always reaches the caller as an ActivityError when
    `every_failure` (runs since the memory patch) or since the patch for every local failure;
    before, only its timeout does (see _as_activity_error)."""
    if local:
        return await _local(
            name,
            argument,
            result_type,
            every_failure=every_failure,
            start_to_close_timeout=timeout,
            schedule_to_close_timeout=patience,
            retry_policy=retry,
            summary=summary,
        )
    queued: R = await workflow.execute_activity(
        name,
        argument,
        result_type=result_type,
        start_to_close_timeout=timeout,
        schedule_to_close_timeout=patience,
        retry_policy=retry,
        summary=summary,
    )
    return queued


def _as_activity_error(bare: FailureError, name: str) -> ActivityError:
    """An ActivityError for a local activity's bare failure, the cause being what counts (see
    ActivityFailure and raise_if_cancelled).

    Seen with temporalio 1.35 (issue 32, F2): a local activity that failed with an
    ApplicationError after its attempts raises that ApplicationError, bare, live and on replay,
    so `except ActivityError` let a store's StoreError fail the run (Temporal status Failed).
    One that timed out raises an ActivityError live, but a bare TimeoutError when its marker is
    replayed, so a run that went on live did not replay (TMPRL1100). A timeout is wrapped for
    every run: that is what the run saw live. Other failures only for runs since the memory
    patch (memory calls) or the patch for every local failure (LOCAL_FAILURES_PATCH): a run
    before it failed on them, and its history must go on failing the same way."""
    return ActivityError(
        "Activity task failed",
        scheduled_event_id=0,
        started_event_id=0,
        identity="",
        activity_type=name,
        activity_id="",
        retry_state=RetryState.TIMEOUT if isinstance(bare, TimeoutError) else None,
    )


async def load_work_context(request: WorkContextRequest, *, local: bool) -> WorkContext:
    """`local`: read in the run's own worker, in the task that loads the catalog (a couple of
    queries: no task-queue round trip); runs of the first 0.5 builds read it as a plain
    activity."""
    return await _nearby_or_queued(
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
    return await _nearby_or_queued(
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
    return await _nearby_or_queued(
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


def llm_queue() -> str | None:
    """The task queue of model calls (see harness.engine.contracts.llm_task_queue); runs recorded
    before it make them on their own queue.

    Each workflow asks first thing in its first task. A patch first asked for just after a
    local activity resolved is not replay-safe: live, the local activity may have outlasted its
    workflow task (so the marker lands in the next task), while replay resolves it at once,
    still in the first task, where no marker is found."""
    if workflow.patched(LLM_QUEUE_PATCH):
        return llm_task_queue(workflow.info().task_queue)
    return None


async def make_plan(request: PlanRequest) -> PlanResponse:
    result: PlanResponse = await workflow.execute_activity(
        PLAN_ACTIVITY,
        request,
        task_queue=llm_queue(),
        result_type=PlanResponse,
        start_to_close_timeout=PLAN_TIMEOUT,
        heartbeat_timeout=LLM_HEARTBEAT_TIMEOUT,
        retry_policy=PLAN_RETRY,
        summary=f"plan attempt {request.attempt}",
    )
    return result


async def check_report(request: ReportCheckRequest) -> ReportCheckResult:
    return await _local(
        CHECK_REPORT_ACTIVITY,
        request,
        ReportCheckResult,
        start_to_close_timeout=CHECK_TIMEOUT,
        retry_policy=SHORT_RETRY,
        summary=f"check report ({request.scenario})",
    )


async def validate_plan(request: PlanCheckRequest) -> PlanCheckResult:
    """A wide plan's validation, in a local activity (see activities.checks.validate_plan)."""
    return await _local(
        VALIDATE_PLAN_ACTIVITY,
        request,
        PlanCheckResult,
        start_to_close_timeout=CHECK_TIMEOUT,
        retry_policy=SHORT_RETRY,
        summary=f"validate a plan of {len(request.plan.nodes)} nodes",
    )


async def judge(request: JudgeCallRequest) -> JudgeCallResult:
    result: JudgeCallResult = await workflow.execute_activity(
        JUDGE_ACTIVITY,
        request,
        task_queue=llm_queue(),
        result_type=JudgeCallResult,
        start_to_close_timeout=PLAN_TIMEOUT,
        heartbeat_timeout=LLM_HEARTBEAT_TIMEOUT,
        retry_policy=PLAN_RETRY,
        summary="judge the report",
    )
    return result


OWN_CANCEL_TIMEOUT = timedelta(seconds=30)


async def cancel_own_run(request: OwnCancellation) -> OwnCancellationResult:
    """Ask Temporal to cancel this run (see harness.waits.cancellation): one call to the server from
    the run's own worker, so a local activity."""
    return await _local(
        CANCEL_OWN_RUN_ACTIVITY,
        request,
        OwnCancellationResult,
        start_to_close_timeout=OWN_CANCEL_TIMEOUT,
        retry_policy=SHORT_RETRY,
        summary="cancel this run through Temporal",
    )


def tool_retry(spec: ToolSpec) -> RetryPolicy:
    """Side effects run once unless the tool is idempotent; everything else is retried (runs
    before 0.10: the same for every tool)."""
    return SIDE_EFFECT_RETRY if spec.side_effects and not spec.idempotent else TOOL_RETRY


def policy_retry(policy: CallPolicy) -> RetryPolicy:
    """The retry policy of a call that reserved `policy.max_attempts` attempts: TOOL_RETRY's
    shape, from the tool's own first backoff."""
    first = timedelta(seconds=policy.backoff_seconds)
    longest = TOOL_RETRY.maximum_interval or first
    return dataclasses.replace(
        TOOL_RETRY,
        initial_interval=first,
        maximum_interval=max(longest, first),
        maximum_attempts=policy.max_attempts,
    )


def policy_timeout(policy: CallPolicy | None, *, local: bool) -> timedelta:
    """One attempt's start-to-close timeout: the tool's own, else the house's."""
    if policy is not None and policy.timeout_seconds is not None:
        return timedelta(seconds=policy.timeout_seconds)
    return LOCAL_TOOL_TIMEOUT if local else TOOL_TIMEOUT


async def run_tool_call(
    request: ToolCallRequest,
    *,
    local: bool,
    retry: RetryPolicy,
    summary: str,
    uses_llm: bool = False,
    policy: CallPolicy | None = None,
) -> ToolCallResult:
    """One node's tool call: a local activity for cheap in-memory tools, else a regular one;
    a tool that calls a model runs where model calls are rate-limited. `policy`: the call's
    own timeout, if its tool has one."""
    if local:
        return await _local(
            RUN_TOOL_ACTIVITY,
            request,
            ToolCallResult,
            start_to_close_timeout=policy_timeout(policy, local=True),
            retry_policy=retry,
            summary=summary,
        )
    remote: ToolCallResult = await workflow.execute_activity(
        RUN_TOOL_ACTIVITY,
        request,
        task_queue=llm_queue() if uses_llm else None,
        result_type=ToolCallResult,
        start_to_close_timeout=policy_timeout(policy, local=False),
        heartbeat_timeout=TOOL_HEARTBEAT_TIMEOUT,
        retry_policy=retry,
        summary=summary,
    )
    return remote


GROUP_TIMEOUT = timedelta(seconds=30)
GROUP_RETRY = RetryPolicy(maximum_attempts=1)
"""A group whose activity failed as a whole is not made again: each of its calls is then made
on its own, and retried there."""


async def run_tool_group(group: ToolCallGroup) -> ToolCallGroupResult:
    """Several ready cheap calls in one local activity (see
    harness.engine.messages.ToolCallGroup)."""
    first, last = group.calls[0].node_id, group.calls[-1].node_id
    return await _local(
        RUN_TOOLS_ACTIVITY,
        group,
        ToolCallGroupResult,
        start_to_close_timeout=GROUP_TIMEOUT,
        retry_policy=GROUP_RETRY,
        summary=f"{len(group.calls)} cheap calls: {first} … {last}",
    )


def to_retry_alone(outcome: BatchCallOutcome, max_attempts: int | None = None) -> bool:
    """A grouped call that failed in a way a retry may mend, with attempts left (of the
    `max_attempts` it reserved; none: TOOL_RETRY's): it is made again as its own activity."""
    retryable = is_retryable(parse_error_code(outcome.error_type))
    limit = max_attempts or TOOL_RETRY.maximum_attempts or 1
    return outcome.call is None and retryable and outcome.attempts < limit


def retry_after(retry: RetryPolicy, earlier_attempts: int) -> RetryPolicy:
    """`retry` for a call that already had `earlier_attempts`: the attempts it has left."""
    if not earlier_attempts or not retry.maximum_attempts:
        return retry
    return dataclasses.replace(
        retry, maximum_attempts=max(retry.maximum_attempts - earlier_attempts, 1)
    )


async def probe_operation(request: ProbeRequest, summary: str) -> OperationProbe:
    """What the tool's system says became of an uncertain call; UNKNOWN if it cannot be asked."""
    try:
        probe: OperationProbe = await workflow.execute_activity(
            PROBE_OPERATION_ACTIVITY,
            request,
            result_type=OperationProbe,
            start_to_close_timeout=PROBE_TIMEOUT,
            heartbeat_timeout=TOOL_HEARTBEAT_TIMEOUT,
            retry_policy=PROBE_RETRY,
            summary=f"probe {summary}",
        )
    except ActivityError as error:
        raise_if_cancelled(error)
        failure = ActivityFailure(error, PROBE_RETRY.maximum_attempts)
        detail = f"the outcome could not be asked for: {failure.message}"
        return OperationProbe(state=ProbeState.UNKNOWN, detail=detail)
    return probe


def tool_call_summary(node_id: str, tool: str, arguments: dict[str, JsonValue]) -> str:
    """`n3 get_population(city=Tokyo)`: what the Temporal UI shows for a node's activity."""
    shown = ", ".join(f"{name}={_short(value)}" for name, value in arguments.items())
    summary = f"{node_id} {tool}({shown})"
    return summary if len(summary) <= _SUMMARY_CHARS else summary[: _SUMMARY_CHARS - 1] + "…"


def _short(value: JsonValue) -> str:
    if isinstance(value, list):
        return f"[{len(value)} items]"
    if isinstance(value, dict):
        return f"{{{len(value)} fields}}"
    text = str(value)
    return text if len(text) <= _SUMMARY_VALUE_CHARS else text[: _SUMMARY_VALUE_CHARS - 1] + "…"
