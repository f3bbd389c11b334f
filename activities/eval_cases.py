"""The eval activity: drive one case's run to its end and score it.

While the run goes, the activity answers its waits as the case scripts them (approvals and
answers, by wait id or in the order the waits open), through the run's own updates, so an eval
speaks to a run exactly as a person would. A wait the case does not script, or a run still going
at the case's time limit, cancels the run and fails the case with the reason. A retried attempt
(the worker died) picks the run up where it stands: it answers only waits still pending.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from pydantic import BaseModel
from temporalio import activity
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from harness.engine.contracts import (
    ANSWER_UPDATE,
    APPROVE_UPDATE,
    EVAL_ACTOR,
    EVAL_CASE_ACTIVITY,
    RESULT_QUERY,
    WAITS_QUERY,
)
from harness.engine.dag import NodeStatus
from harness.engine.run import RunResult
from harness.evals.chaos import MAX_CHAOS_MARKS
from harness.evals.eval_case import EvalCase, ScriptedAnswer, ScriptedApproval
from harness.evals.eval_report import CaseResult, CaseRunRequest, bounded_unmet
from harness.evals.eval_scoring import CaseObservation, observe, unmet
from harness.waits.deliveries import AnswerRequest, ApprovalRequest
from harness.waits.wait_book import Decision, DeliveryReceipt, Wait, WaitKind, WaitStatus
from scenarios import get_scenario
from scenarios.base import OutcomeInput

log = structlog.get_logger()

POLL_SECONDS = 0.5
RPC_TIMEOUT = timedelta(seconds=10)
"""Well inside the heartbeat timeout: a call that hangs fails this attempt, never a second
attempt driving the same run beside it."""


class EvalActivities:
    def __init__(self, client: Client, services: Mapping[str, object]) -> None:
        self._client = client
        self._services = services

    @activity.defn(name=EVAL_CASE_ACTIVITY)
    async def run_case(self, request: CaseRunRequest) -> CaseResult:
        handle = self._client.get_workflow_handle(request.run_id)
        problems = await self._drive(handle, request.case, request.timeout_seconds)
        result: RunResult = await handle.query(
            RESULT_QUERY, result_type=RunResult, rpc_timeout=RPC_TIMEOUT
        )
        seen = observe(result, await self._scenario_problems(request.case, result), problems)
        return _case_result(request, seen, unmet(request.case.expect, seen))

    async def _drive(
        self, handle: WorkflowHandle[Any, Any], case: EvalCase, timeout_seconds: float
    ) -> list[str]:
        """Answer the run's waits as the case scripts them until the run's workflow closes.
        What went wrong is carried in the heartbeat, so an attempt after a dead worker still
        says why it cancelled the run; the time limit counts from the run's start."""
        details = activity.info().heartbeat_details
        problems: list[str] = list(details[0]) if details else []
        started = (await handle.describe(rpc_timeout=RPC_TIMEOUT)).start_time
        deadline = started + timedelta(seconds=timeout_seconds)
        cancelled = False
        closing = asyncio.ensure_future(_until_closed(handle))
        try:
            while not await _closed(handle):
                activity.heartbeat(problems)
                if not problems:
                    problems = await _answer_waits(handle, case)
                if not problems and datetime.now(UTC) > deadline:
                    problems = [await _overdue(handle, timeout_seconds)]
                if problems and not cancelled:
                    activity.heartbeat(problems)
                    await _cancel(handle, problems[0])
                    cancelled = True
                await _pause(closing)
        finally:
            closing.cancel()
        return problems

    async def _scenario_problems(self, case: EvalCase, result: RunResult) -> list[str]:
        outcome = OutcomeInput(
            run_id=result.run_id,
            goal=result.goal,
            status=result.status.value,
            report=result.report,
            results={n.id: n.result for n in result.nodes if n.status is NodeStatus.DONE},
        )
        try:
            return await get_scenario(case.scenario).outcome_problems(outcome, self._services)
        except Exception as error:  # a check that breaks fails the case, and says why
            log.warning("eval.check_failed", case=case.key, error=str(error))
            return [f"the check failed to run: {error}"[:500]]


Scripted = ScriptedApproval | ScriptedAnswer


async def _answer_waits(handle: WorkflowHandle[Any, Any], case: EvalCase) -> list[str]:
    """Send each pending question and approval its scripted response; the problem, if a wait
    has none or the run refuses the one it has."""
    waits: list[Wait] = await handle.query(
        WAITS_QUERY, result_type=list[Wait], rpc_timeout=RPC_TIMEOUT
    )
    for wait, scripted in _responses(case, waits):
        if scripted is None:
            return [
                f"the run waits for {wait.kind.value} '{wait.id}' ({wait.prompt[:200]}) "
                "and the case scripts no response for it"
            ]
        refused = await _send(handle, wait, scripted)
        if refused is not None:
            return [f"the run refused the scripted response to '{wait.id}': {refused}"]
    return []


async def _overdue(handle: WorkflowHandle[Any, Any], timeout_seconds: float) -> str:
    """Why a run still going at the case's limit is cancelled, with what it waits for."""
    waits: list[Wait] = await handle.query(
        WAITS_QUERY, result_type=list[Wait], rpc_timeout=RPC_TIMEOUT
    )
    pending = [f"{w.kind.value} '{w.id}'" for w in waits if w.status is WaitStatus.PENDING]
    waiting = f"; it waits for {', '.join(pending)}" if pending else ""
    return f"the run did not end within {timeout_seconds:g} s{waiting}"


def _responses(case: EvalCase, waits: list[Wait]) -> list[tuple[Wait, Scripted | None]]:
    """Each pending approval or question with its scripted response (None: none is scripted).
    A wait takes the response that names it, else the next unnamed one of its kind in the
    order the waits opened, counting the waits already settled, so a retry answers the same."""
    scripts: dict[WaitKind, list[Scripted]] = {
        WaitKind.APPROVAL: list(case.options.approvals),
        WaitKind.USER_INPUT: list(case.options.answers),
    }
    pending: list[tuple[Wait, Scripted | None]] = []
    for kind, scripted in scripts.items():
        named = {item.wait: item for item in scripted if item.wait}
        unnamed = [item for item in scripted if not item.wait]
        opened = sorted(
            (wait for wait in waits if wait.kind is kind and wait.id not in named),
            key=lambda wait: (wait.created_at, wait.id),
        )
        order = {wait.id: index for index, wait in enumerate(opened)}
        for wait in waits:
            if wait.kind is not kind or wait.status is not WaitStatus.PENDING:
                continue
            index = order.get(wait.id, len(unnamed))
            pending.append((wait, named.get(wait.id) or _at(unnamed, index)))
    return pending


def _at(items: list[Scripted], index: int) -> Scripted | None:
    return items[index] if index < len(items) else None


async def _send(handle: WorkflowHandle[Any, Any], wait: Wait, scripted: Scripted) -> str | None:
    """Deliver through the run's update; why the run refused it, or None. A run that ends
    meanwhile is seen at the next poll."""
    update: str
    message: BaseModel
    if isinstance(scripted, ScriptedApproval):
        update = APPROVE_UPDATE
        message = ApprovalRequest(
            wait_id=wait.id,
            decision=Decision(scripted.decision.value),
            actor=scripted.actor,
            comment=scripted.comment,
        )
    else:
        update = ANSWER_UPDATE
        message = AnswerRequest(wait_id=wait.id, text=scripted.text, actor=scripted.actor)
    try:
        receipt: DeliveryReceipt = await handle.execute_update(
            update, message, result_type=DeliveryReceipt, rpc_timeout=RPC_TIMEOUT
        )
    except WorkflowUpdateFailedError as error:
        if await _closed(handle):
            return None
        cause = error.cause
        return str(cause.message if isinstance(cause, ApplicationError) else cause)
    except RPCError as error:
        log.info("eval.delivery_not_sent", wait=wait.id, error=error.message)
        return None
    return None if receipt.accepted else receipt.reason or "refused"


async def _cancel(handle: WorkflowHandle[Any, Any], reason: str) -> None:
    """Temporal's own cancellation, so the run ends Canceled, with the reason recorded (once:
    a cancel asked again changes nothing; a run that ended meanwhile is not an error)."""
    try:
        await handle.cancel(reason=f"{reason[:2000]} (by {EVAL_ACTOR})", rpc_timeout=RPC_TIMEOUT)
    except RPCError as error:
        log.info("eval.cancel_not_sent", run_id=handle.id, error=error.message)


async def _until_closed(handle: WorkflowHandle[Any, Any]) -> None:
    """Returns when the run's workflow closes, however it ends: Temporal's long poll for the
    close event, so a case ends as its run does instead of at the next poll (a run of the
    offline suite takes about a second: up to half a second more for each case cost the
    183-case suite about 15 of its 100 s). The polls stay, for the waits to answer."""
    with contextlib.suppress(Exception):
        await handle.result()


async def _pause(closing: asyncio.Future[None]) -> None:
    """Until the next poll, or the run's close if sooner. A long poll that ended without the
    close (the server unreachable) paces the polls no more: they wait the whole interval."""
    if closing.done():
        await asyncio.sleep(POLL_SECONDS)
    else:
        await asyncio.wait({closing}, timeout=POLL_SECONDS)


async def _closed(handle: WorkflowHandle[Any, Any]) -> bool:
    description = await handle.describe(rpc_timeout=RPC_TIMEOUT)
    return description.status is not WorkflowExecutionStatus.RUNNING


def _case_result(request: CaseRunRequest, seen: CaseObservation, problems: list[str]) -> CaseResult:
    case = request.case
    return CaseResult(
        case=case.key,
        scenario=case.scenario,
        repeat=request.repeat,
        run_id=request.run_id,
        tags=case.tags,
        passed=not problems,
        unmet=bounded_unmet(problems),  # the suite carries every result: each one is bounded
        status=seen.status,
        attempts=seen.attempts,
        replans=seen.replans,
        tool_calls=seen.tool_calls,
        tokens=seen.tokens,
        cost_usd=seen.cost_usd,
        latency_seconds=seen.wall_seconds,
        judge_score=seen.judge_score,
        chaos=seen.chaos[:MAX_CHAOS_MARKS],
        ended_as_expected=seen.status in case.expect.statuses() if seen.chaos else None,
    )
