"""The calls of the run's steps: the catalog it plans from, the planner, a wide plan's
validation, the report's deterministic check and the judge, and cancelling itself through
Temporal. The model calls (planner, judge) run on the LLM queue and heartbeat; the rest are
local activities in the run's own worker."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from harness.catalog.tools import ToolCatalog
from harness.engine.contracts import (
    CANCEL_OWN_RUN_ACTIVITY,
    CHECK_REPORT_ACTIVITY,
    JUDGE_ACTIVITY,
    LIST_TOOLS_ACTIVITY,
    PLAN_ACTIVITY,
    VALIDATE_PLAN_ACTIVITY,
)
from harness.engine.messages import (
    CatalogRequest,
    JudgeCallRequest,
    JudgeCallResult,
    PlanCheckRequest,
    PlanCheckResult,
    PlanRequest,
    PlanResponse,
    ReportCheckRequest,
    ReportCheckResult,
)
from harness.waits.cancellation import OwnCancellation, OwnCancellationResult
from workflows.activity_calls.failures import NON_RETRYABLE_CODES
from workflows.activity_calls.placement import SHORT_RETRY, llm_queue, local_activity

CATALOG_TIMEOUT = timedelta(seconds=30)
PLAN_TIMEOUT = timedelta(minutes=62)
"""A model call's activity (planner, judge, agent turn, a writing tool's): longer than the
longest call an operator may set (HARNESS_*_TIMEOUT_SECONDS, at most an hour), so the call gives
up first and names the provider. A dead worker is found by the heartbeat timeout instead."""
CHECK_TIMEOUT = timedelta(seconds=60)
LLM_HEARTBEAT_TIMEOUT = timedelta(seconds=30)
"""The planner and the judge heartbeat while the model answers: a dead worker is seen in
seconds, not after the hour-long timeout of the call."""
PLAN_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_attempts=3,
    non_retryable_error_types=NON_RETRYABLE_CODES,
)
OWN_CANCEL_TIMEOUT = timedelta(seconds=30)


async def load_catalog(scenario: str) -> ToolCatalog:
    return await local_activity(
        LIST_TOOLS_ACTIVITY,
        CatalogRequest(scenario=scenario),
        ToolCatalog,
        start_to_close_timeout=CATALOG_TIMEOUT,
        retry_policy=SHORT_RETRY,
        summary=f"catalog of {scenario}",
    )


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
    return await local_activity(
        CHECK_REPORT_ACTIVITY,
        request,
        ReportCheckResult,
        start_to_close_timeout=CHECK_TIMEOUT,
        retry_policy=SHORT_RETRY,
        summary=f"check report ({request.scenario})",
    )


async def validate_plan(request: PlanCheckRequest) -> PlanCheckResult:
    """A wide plan's validation, in a local activity (see activities.checks.validate_plan)."""
    return await local_activity(
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


async def cancel_own_run(request: OwnCancellation) -> OwnCancellationResult:
    """Ask Temporal to cancel this run (see harness.waits.cancellation): one call to the server from
    the run's own worker, so a local activity."""
    return await local_activity(
        CANCEL_OWN_RUN_ACTIVITY,
        request,
        OwnCancellationResult,
        start_to_close_timeout=OWN_CANCEL_TIMEOUT,
        retry_policy=SHORT_RETRY,
        summary="cancel this run through Temporal",
    )
