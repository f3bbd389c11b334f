"""Whole runs against each fake API whose model calls fail: a request the server cannot take
ends the run FAILED_PROVIDER at once with the server's message; a server that asks to come back
later is waited for; a model's cannot_plan is planned once more, then the user is asked."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle

from activities.llm import LLMProvider
from durable_harness._client.run_results import result_of
from harness.engine.run import RunPhase, RunRequest, RunResult
from harness.waits.deliveries import AnswerRequest
from harness.waits.wait_book import Wait, WaitStatus
from tests.fakes import FakeApi, FakeServer, Recorded, Reply
from tests.providers.history import plan_activities
from tests.providers.script import PLAN_USAGE, CitiesScript
from tests.providers.support import MODELS
from tests.support import deliver_update, execute_run, history_events, running_worker, start_run
from workflows import AgentRunWorkflow

GOAL = "Compare Paris and Tokyo"
REJECTION = "Unrecognized request argument supplied: frobnicate"
REASON = "no tool here tells the weather"
CANNOT_PLAN = f'{{"nodes": [], "cannot_plan": "{REASON}"}}'


def planner_requests(server: FakeServer) -> list[Recorded]:
    return [request for request in server.requests if request.body["model"] == MODELS.planner]


@dataclass
class FailingModel:
    """The cities script, except that every call to `model` gets `status` with `message`."""

    api: FakeApi
    model: str
    status: int
    message: str

    def __call__(self, request: Recorded) -> Reply:
        if request.body["model"] == self.model:
            return self.api.error_reply(self.status, self.message)
        return CitiesScript(self.api, GOAL)(request)


async def test_a_rejected_request_ends_the_run_failed_provider_after_one_plan_attempt(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.error_reply(400, REJECTION))
    server.fallback = CitiesScript(api, GOAL)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.FAILED_PROVIDER, result.error
    assert result.error is not None and REJECTION in result.error
    assert "rejected the request (400)" in result.error
    assert len(planner_requests(server)) == 1, "no retry, no replan with the same request"
    (planning,) = plan_activities(await history_events(client, result.run_id))
    assert planning.attempt == 1 and planning.failure is not None
    info = planning.failure.application_failure_info
    assert info.type == "REQUEST_REJECTED" and info.non_retryable
    assert [attempt.outcome for attempt in result.attempt_history] == [RunPhase.FAILED_PROVIDER]
    description = await client.get_workflow_handle(result.run_id).describe()
    assert description.status is WorkflowExecutionStatus.FAILED


@pytest.mark.requires_local_server("the test server does not pass the last failure to the retry")
async def test_an_unavailable_server_with_a_retry_after_is_waited_for_and_the_run_succeeds(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.error_reply(503, "the model is loading", {"retry-after": "1"}))
    server.fallback = CitiesScript(api, GOAL)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.SUCCEEDED, result.error
    assert len(planner_requests(server)) == 2
    (planning,) = plan_activities(await history_events(client, result.run_id))
    assert planning.attempt == 2 and planning.last_failure is not None
    info = planning.last_failure.application_failure_info
    assert info.type == "RATE_LIMITED" and not info.non_retryable
    assert 1.0 <= info.next_retry_delay.ToTimedelta().total_seconds() <= 1.5


@pytest.mark.waits_out_timeouts
@pytest.mark.requires_local_server("the test server does not pass the last failure to the retry")
async def test_an_outage_outlasting_the_retries_ends_failed_provider_after_longer_backoffs(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    # A local server's bare 500 on a strict schema may be its way to refuse the schema, so the
    # OpenAI provider tries the next mode once per attempt; a 500 there too is the outage.
    per_attempt = 2 if api.name == "openai" else 1
    server.enqueue(*[api.error_reply(500, "upstream connect error")] * (3 * per_attempt))
    server.fallback = CitiesScript(api, GOAL)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.FAILED_PROVIDER, result.error
    assert (
        result.error is not None and "is unavailable (500): upstream connect error" in result.error
    )
    assert len(planner_requests(server)) == 3 * per_attempt, "three attempts, then no replan"
    (planning,) = plan_activities(await history_events(client, result.run_id))
    assert planning.attempt == 3 and planning.last_failure is not None
    info = planning.last_failure.application_failure_info
    assert info.type == "PROVIDER_UNAVAILABLE"
    assert 10.0 <= info.next_retry_delay.ToTimedelta().total_seconds() <= 15.0  # 2nd of 5, 10


async def test_a_writing_tool_whose_request_is_rejected_ends_the_run_failed_provider(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.fallback = FailingModel(api, MODELS.worker, 422, REJECTION)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.FAILED_PROVIDER, result.error
    assert result.error is not None and REJECTION in result.error
    assert "REQUEST_REJECTED" in result.error
    assert len(planner_requests(server)) == 1, "a rejected request is not planned around"


async def test_a_judge_whose_request_is_rejected_ends_the_run_failed_provider(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.fallback = FailingModel(api, MODELS.judge, 400, REJECTION)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL))
    assert result.status is RunPhase.FAILED_PROVIDER, result.error
    assert result.error is not None and result.error.startswith("the judge failed: ")
    assert REJECTION in result.error
    assert result.report is not None, "the report was written before the judge failed"


async def test_a_cannot_plan_is_planned_once_more_told_the_reason_then_the_user_is_asked(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.enqueue(api.text_reply(CANNOT_PLAN, PLAN_USAGE), api.text_reply(CANNOT_PLAN, PLAN_USAGE))
    server.fallback = CitiesScript(api, GOAL)
    async with running_worker(client, task_queue, provider):
        handle = await start_run(client, task_queue, RunRequest(goal=GOAL))
        question = await pending_wait(handle, "question-2")
        receipt = await deliver_update(
            handle, "answer_sync", AnswerRequest(wait_id="question-2", text="Paris and Tokyo")
        )
        result: RunResult = await result_of(client, handle)
    assert receipt.accepted
    assert REASON in question.prompt
    assert result.status is RunPhase.SUCCEEDED, result.error
    first, replan, after_answer = planner_requests(server)
    assert f"CANNOT_PLAN: the planner cannot plan this goal: {REASON}" in api.user_text(replan)
    assert "Paris and Tokyo" in api.user_text(after_answer)
    assert REASON not in api.user_text(first)


async def test_a_cannot_plan_without_questions_ends_failed_validation_with_the_reason(
    client: Client, task_queue: str, api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    server.fallback = lambda request: api.text_reply(CANNOT_PLAN, PLAN_USAGE)(request)
    async with running_worker(client, task_queue, provider):
        result = await execute_run(client, task_queue, RunRequest(goal=GOAL, ask_user=False))
    assert result.status is RunPhase.FAILED_VALIDATION
    assert result.error is not None and REASON in result.error
    assert len(planner_requests(server)) == 2, "one replan, then no question to ask"
    assert result.waits == []


async def pending_wait(handle: WorkflowHandle[Any, Any], wait_id: str) -> Wait:
    """The wait once it is PENDING (the run plans twice first: wait generously)."""
    for _ in range(1200):
        waits = await handle.query(AgentRunWorkflow.waits)
        found = [w for w in waits if w.id == wait_id and w.status is WaitStatus.PENDING]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"wait {wait_id} never became pending")
