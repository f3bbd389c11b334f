"""Models per run: `--planner-model`, `--worker-model` and `--judge-model` reach the roles they
name, show in the run's static details and in the RunResult's usage per role, and a model the
provider cannot serve is refused before the run starts."""

from __future__ import annotations

import json

import pytest
from temporalio.client import Client

from tests.starter.test_cli import harness
from tests.support import running_worker

pytestmark = pytest.mark.requires_local_server("`harness run` sets the Harness* search attributes")


async def test_each_role_works_with_the_model_the_run_names_and_the_result_says_so(
    client: Client, task_queue: str
) -> None:
    args = ("run", "Compare Paris and Tokyo", "--id", "models-1", "--json", "--quiet",
            "--planner-model", "scripted-planner-xl",
            "--judge-model", "scripted-judge")  # fmt: skip
    async with running_worker(client, task_queue):
        code, out, err = await harness(*args, client=client, task_queue=task_queue)
    assert code == 0, err
    result = json.loads(out)
    models = {role: usage["models"] for role, usage in result["usage_by_role"].items()}
    assert models == {
        "planner": ["scripted-planner-xl"],
        "worker": ["scripted-v1"],  # not named: the worker's own
        "critic": ["scripted-judge"],
    }
    assert result["verdict"]["checked_by"][-1] == "judge:scripted-judge"
    described = await client.get_workflow_handle("models-1").describe()
    static = await described.static_details() or ""
    assert "models: planner scripted-planner-xl, worker the worker default, judge " in static


async def test_a_model_the_named_provider_cannot_serve_is_refused_before_the_run_starts() -> None:
    code, out, err = await harness(
        "run", "Compare Paris and Tokyo", "--provider", "scripted", "--worker-model", "gpt-4.1"
    )
    assert code == 2 and out == ""
    assert err.strip() == (
        "harness: cannot start this run: worker_model: provider scripted serves scripted-* "
        "models, not gpt-4.1"
    )


async def test_a_model_the_worker_cannot_serve_fails_the_run_with_the_reason(
    client: Client, task_queue: str
) -> None:
    args = ("run", "Compare Paris and Tokyo", "--json", "--quiet", "--planner-model", "gpt-4.1")
    async with running_worker(client, task_queue):  # the worker's provider is the offline one
        code, out, _ = await harness(*args, client=client, task_queue=task_queue)
    result = json.loads(out)
    assert code == 1 and result["status"] == "FAILED_PROVIDER"  # as any planner CONFIG_INVALID
    assert "provider scripted serves scripted-* models, not gpt-4.1" in result["error"]


async def test_a_worker_model_the_worker_cannot_serve_fails_its_first_writing_tool_config_invalid(
    client: Client, task_queue: str
) -> None:
    args = ("run", "Compare Paris and Tokyo", "--json", "--quiet", "--worker-model", "gpt-4.1")
    async with running_worker(client, task_queue):
        code, out, _ = await harness(*args, client=client, task_queue=task_queue)
    result = json.loads(out)
    assert code == 1 and result["status"] == "FAILED_PROVIDER"
    failed = [node for node in result["nodes"] if node["status"] == "FAILED"]
    assert failed and {node["error_code"] for node in failed} == {"CONFIG_INVALID"}
