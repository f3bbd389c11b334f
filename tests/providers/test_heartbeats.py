"""The planner and the judge heartbeat while the model answers, like tools do, so a worker that
dies mid-call is noticed within the heartbeat timeout instead of the call's three minutes."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import ActivityEnvironment

from activities import heartbeats
from activities.judge import JudgeActivities
from activities.llm import ProviderRegistry, ScriptedProvider
from activities.planner import PlannerActivities
from harness.catalog.llm import JudgeReply, JudgeRequest
from harness.engine.contracts import JUDGE_ACTIVITY, PLAN_ACTIVITY
from harness.engine.messages import JudgeCallRequest, PlanRequest, PlanResponse
from harness.engine.run import RunRequest
from scenarios import get_scenario
from scenarios.base import Pack
from tests.support import execute_run, history_events, running_worker
from workflows.activity_calls.steps import LLM_HEARTBEAT_TIMEOUT

BEATS = 3
GIVE_UP_SECONDS = 60.0


class SlowModel(ScriptedProvider):
    """The offline provider, answering only once the activity has heartbeaten BEATS times
    while it waited (a model that takes its time; the test does not time anything)."""

    def __init__(self) -> None:
        self.seen: list[object] = []
        self._enough = asyncio.Event()

    def heartbeat(self, *details: object) -> None:
        self.seen.append(details)
        if len(self.seen) >= BEATS:
            self._enough.set()

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        await asyncio.wait_for(self._enough.wait(), GIVE_UP_SECONDS)
        return await super().plan(request, scenario)

    async def judge(self, request: JudgeRequest) -> JudgeReply:
        await asyncio.wait_for(self._enough.wait(), GIVE_UP_SECONDS)
        return await super().judge(request)


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> SlowModel:
    monkeypatch.setattr(heartbeats, "HEARTBEAT_EVERY_SECONDS", 0.01)
    return SlowModel()


async def test_the_planner_heartbeats_while_the_model_answers(model: SlowModel) -> None:
    beats = ActivityEnvironment()
    beats.on_heartbeat = model.heartbeat
    planner = PlannerActivities(ProviderRegistry.always(model))
    request = PlanRequest(
        run_id="r",
        goal="Compare Paris and Tokyo",
        scenario="cities",
        attempt=1,
        catalog=get_scenario("cities").catalog(),
    )

    response = await beats.run(planner.plan, request)

    assert response.plan.nodes
    assert len(model.seen) >= BEATS


async def test_the_judge_heartbeats_while_the_model_answers(model: SlowModel) -> None:
    beats = ActivityEnvironment()
    beats.on_heartbeat = model.heartbeat
    judge = JudgeActivities(ProviderRegistry.always(model))
    request = JudgeCallRequest(
        run_id="r", scenario="cities", goal="Compare Paris", report="# Paris", results={}
    )

    await beats.run(judge.judge, request)

    assert len(model.seen) >= BEATS


async def test_planner_and_judge_are_scheduled_with_a_heartbeat_timeout(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        result = await execute_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
    timeouts = {
        event.activity_task_scheduled_event_attributes.activity_type.name: (
            event.activity_task_scheduled_event_attributes.heartbeat_timeout.ToTimedelta()
        )
        for event in await history_events(client, result.run_id)
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    }
    assert timeouts[PLAN_ACTIVITY] == timeouts[JUDGE_ACTIVITY] == LLM_HEARTBEAT_TIMEOUT
