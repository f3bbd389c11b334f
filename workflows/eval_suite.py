"""EvalSuiteWorkflow: an eval suite as one durable workflow. Each case runs as a child AgentRun,
driven and scored by one activity, at most `concurrency` cases at once; a case's repeats run one
after another (a side effect they share, such as a refund, is seen in order). A finished case is
in the history, so a worker or a CLI that dies loses none of them."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ChildWorkflowError

from harness.engine.bounds import request_problems, workflow_id_problems
from harness.engine.contracts import EVAL_CASE_ACTIVITY, EVAL_WORKFLOW, PROGRESS_QUERY, RUN_WORKFLOW
from harness.engine.run import RunPhase
from harness.evals.eval_case import EvalCase
from harness.evals.eval_report import (
    CaseResult,
    CaseRunRequest,
    EvalProgress,
    EvalReport,
    EvalRequest,
    UnreadableEvalRequestError,
    build_report,
)
from workflows import search_attributes
from workflows.history_limit import history_full

CASE_HEARTBEAT_TIMEOUT = timedelta(seconds=30)
CASE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=10)
"""A worker that dies while it drives a case is seen within the heartbeat timeout, and another
attempt picks the case's run up where it stands."""


def _cancelled() -> bool:
    """The suite was asked to cancel (an event in its history, so replay sees it too)."""
    return workflow.cancellation_reason() is not None


def case_run_id(eval_id: str, case: EvalCase, repeat: int) -> str:
    return f"{eval_id}.{case.scenario}.{case.id}.{repeat}"


@workflow.defn(name=EVAL_WORKFLOW, failure_exception_types=[UnreadableEvalRequestError])
class EvalSuiteWorkflow:
    def __init__(self) -> None:
        self._finished: list[CaseResult] = []
        self._total = 0

    @workflow.run
    async def run(self, request: EvalRequest) -> EvalReport:
        started = request.started_at or workflow.now()
        self._total = len(request.cases) * request.repeat
        self._finished = list(request.finished)
        done = {(result.case, result.repeat) for result in self._finished}
        left = [
            (case, [r for r in range(1, request.repeat + 1) if (case.key, r) not in done])
            for case in request.cases
        ]
        waiting = deque((case, repeats) for case, repeats in left if repeats)
        limit = request.history_events_before_new_run
        begun = 0

        def may_start() -> bool:
            """No new case once the suite is cancelled, nor (once this run has begun one) when
            its history is full: each case's child run costs the suite its events and its
            result, so the rest go on in the next run, far below Temporal's limits."""
            return not _cancelled() and not (begun and history_full(limit))

        async def lane() -> None:
            nonlocal begun
            while waiting and may_start():
                case, repeats = waiting.popleft()
                for index, repeat in enumerate(repeats):
                    if index and not may_start():
                        waiting.appendleft((case, repeats[index:]))
                        break
                    begun += 1
                    self._finished.append(await self._run_case(request, case, repeat))

        await asyncio.gather(*(lane() for _ in range(min(request.concurrency, len(waiting)))))
        if _cancelled():
            raise asyncio.CancelledError  # the suite ends Canceled; each case under way ended
        await workflow.wait_condition(workflow.all_handlers_finished)
        if waiting:  # every case under way has finished: the rest go on in a fresh history
            workflow.continue_as_new(
                request.model_copy(update={"finished": self._finished, "started_at": started})
            )
        eval_id = workflow.info().workflow_id
        return build_report(eval_id, request, self._finished, started, workflow.now())

    @workflow.query(
        name=PROGRESS_QUERY, description="The cases finished after the first AFTER, and how many."
    )
    def progress(self, after: int = 0) -> EvalProgress:
        return EvalProgress(
            total=self._total, done=len(self._finished), finished=self._finished[after:]
        )

    async def _run_case(self, request: EvalRequest, case: EvalCase, repeat: int) -> CaseResult:
        run_id = case_run_id(workflow.info().workflow_id, case, repeat)
        run_request = case.run_request(request.provider)
        if request.chaos is not None:  # the case's own draws, the same in every eval
            key = f"{case.key}#{repeat}"
            run_request.provider = request.chaos.provider_for(key, run_request.provider)
        # A run id past Temporal's bound (a raw request's long scenario) would fail this
        # workflow's task on every retry: the case is refused instead.
        refused = request_problems(run_request) + workflow_id_problems("run id", run_id)
        if refused:
            return _unrun(case, run_id, repeat, "the run was refused: " + "; ".join(refused))
        handle = await workflow.start_child_workflow(
            RUN_WORKFLOW,
            run_request,
            id=run_id,
            parent_close_policy=workflow.ParentClosePolicy.REQUEST_CANCEL,
            static_summary=f"eval {case.key}: {case.goal}"[:200],
            search_attributes=(
                search_attributes.initial(case.scenario, RunPhase.CREATED.value)
                if request.search_attributes
                else None
            ),
        )
        try:
            result: CaseResult = await workflow.execute_activity(
                EVAL_CASE_ACTIVITY,
                CaseRunRequest(
                    case=case,
                    run_id=run_id,
                    repeat=repeat,
                    timeout_seconds=request.case_timeout_seconds,
                ),
                result_type=CaseResult,
                start_to_close_timeout=timedelta(seconds=request.case_timeout_seconds + 120),
                heartbeat_timeout=CASE_HEARTBEAT_TIMEOUT,
                retry_policy=CASE_RETRY,
                summary=case.key,
            )
        except ActivityError as error:
            handle.cancel()
            why = "the eval was cancelled" if _cancelled() else f"not driven: {error.cause}"
            return _unrun(case, run_id, repeat, why)
        with contextlib.suppress(ChildWorkflowError):
            await handle  # a run that ends Failed or Canceled: its result is in the case's
        return result


def _unrun(case: EvalCase, run_id: str, repeat: int, why: str) -> CaseResult:
    return CaseResult(
        case=case.key,
        scenario=case.scenario,
        repeat=repeat,
        run_id=run_id,
        tags=case.tags,
        passed=False,
        unmet=[why],
    )
