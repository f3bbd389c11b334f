"""A node's tool call: a local activity for cheap in-memory tools, else a regular one (on the
LLM queue for a tool that calls a model); ready cheap calls grouped in one local activity;
each call's retries, timeout and what the Temporal UI shows for it; and the probe that asks a
tool's system what became of an uncertain call."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from pydantic import JsonValue
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

from harness.catalog.tools import CallPolicy, ToolSpec
from harness.core.errors import is_retryable, parse_error_code
from harness.engine.contracts import (
    PROBE_OPERATION_ACTIVITY,
    RUN_TOOL_ACTIVITY,
    RUN_TOOLS_ACTIVITY,
)
from harness.engine.messages import (
    BatchCallOutcome,
    OperationProbe,
    ProbeRequest,
    ProbeState,
    ToolCallGroup,
    ToolCallGroupResult,
    ToolCallRequest,
    ToolCallResult,
)
from workflows.activity_calls.failures import (
    NON_RETRYABLE_CODES,
    ActivityFailure,
    raise_if_cancelled,
)
from workflows.activity_calls.placement import llm_queue, local_activity
from workflows.activity_calls.steps import PLAN_TIMEOUT

TOOL_TIMEOUT = timedelta(minutes=2)
LOCAL_TOOL_TIMEOUT = timedelta(seconds=10)
TOOL_HEARTBEAT_TIMEOUT = timedelta(seconds=30)
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
GROUP_TIMEOUT = timedelta(seconds=30)
GROUP_RETRY = RetryPolicy(maximum_attempts=1)
"""A group whose activity failed as a whole is not made again: each of its calls is then made
on its own, and retried there."""

_SUMMARY_VALUE_CHARS = 40
_SUMMARY_CHARS = 200


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


def policy_timeout(policy: CallPolicy | None, *, local: bool, uses_llm: bool = False) -> timedelta:
    """One attempt's start-to-close timeout: the tool's own, else the house's (a tool that calls
    a model: as long as a model call may be set to take, see steps.PLAN_TIMEOUT)."""
    if policy is not None and policy.timeout_seconds is not None:
        return timedelta(seconds=policy.timeout_seconds)
    if uses_llm and not local:
        return PLAN_TIMEOUT
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
        return await local_activity(
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
        start_to_close_timeout=policy_timeout(policy, local=False, uses_llm=uses_llm),
        heartbeat_timeout=TOOL_HEARTBEAT_TIMEOUT,
        retry_policy=retry,
        summary=summary,
    )
    return remote


async def run_tool_group(group: ToolCallGroup) -> ToolCallGroupResult:
    """Several ready cheap calls in one local activity (see
    harness.engine.messages.ToolCallGroup)."""
    return await local_activity(
        RUN_TOOLS_ACTIVITY,
        group,
        ToolCallGroupResult,
        start_to_close_timeout=GROUP_TIMEOUT,
        retry_policy=GROUP_RETRY,
        summary=group_summary(group),
    )


def group_summary(group: ToolCallGroup) -> str:
    """`delay, echo: 10 cheap calls n1 … n10`: the group's tools first, as a node's summary."""
    tools = sorted({call.tool for call in group.calls})
    named = ", ".join(tools[:3]) + (f" and {len(tools) - 3} more" if len(tools) > 3 else "")
    first, last = group.calls[0].node_id, group.calls[-1].node_id
    return f"{named}: {len(group.calls)} cheap calls {first} … {last}"


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
    """`get_population n3 (city=Tokyo)`: what the Temporal UI shows for a node's activity, the
    tool first, so that the UI's list of activities (all of one type) reads by tool; then the
    node, then its arguments (cut short first when it is long)."""
    shown = _arguments(arguments)
    return _bounded(f"{tool} {node_id} ({shown})" if shown else f"{tool} {node_id}")


def call_text(node_id: str, tool: str, arguments: dict[str, JsonValue]) -> str:
    """`n3 get_population(city=Tokyo)`: the call as a prompt names it ("approve n3 ...?")."""
    return _bounded(f"{node_id} {tool}({_arguments(arguments)})")


def _arguments(arguments: dict[str, JsonValue]) -> str:
    return ", ".join(f"{name}={_short(value)}" for name, value in arguments.items())


def _bounded(summary: str) -> str:
    return summary if len(summary) <= _SUMMARY_CHARS else summary[: _SUMMARY_CHARS - 1] + "…"


def _short(value: JsonValue) -> str:
    if isinstance(value, list):
        return f"[{len(value)} items]"
    if isinstance(value, dict):
        return f"{{{len(value)} fields}}"
    text = str(value)
    return text if len(text) <= _SUMMARY_VALUE_CHARS else text[: _SUMMARY_VALUE_CHARS - 1] + "…"
