"""The `harness` command as a user runs it: a real process against the dev server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from temporalio.client import Client

from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.engine.run import RunRequest
from tests.support import running_worker, start_run

HARNESS = str(Path(sys.executable).parent / "harness")


async def harness(
    *args: str, client: Client | None = None, task_queue: str = ""
) -> tuple[int, str, str]:
    env = dict(os.environ)
    if client is not None:
        env["TEMPORAL_ADDRESS"] = client.service_client.config.target_host
        env["HARNESS_TASK_QUEUE"] = task_queue
    process = await asyncio.create_subprocess_exec(
        HARNESS,
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await process.communicate()
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


def _write(tmp_path: Path, plan: Plan | str) -> str:
    path = tmp_path / "plan.json"
    path.write_text(plan if isinstance(plan, str) else plan.model_dump_json())
    return str(path)


@pytest.mark.requires_local_server("`harness run` starts runs with the Harness* search attributes")
async def test_run_prints_the_cities_report_and_a_summary(client: Client, task_queue: str) -> None:
    async with running_worker(client, task_queue):
        code, out, err = await harness(
            "run", "Compare Paris, Tokyo and New York", client=client, task_queue=task_queue
        )
    assert code == 0, err
    assert "# City comparison: Paris, Tokyo, New York" in out
    assert "SUCCEEDED" in out.splitlines()[-1]
    assert "10 nodes: 10 done, 0 failed, 0 skipped" in out


@pytest.mark.requires_local_server("`harness run` starts runs with the Harness* search attributes")
async def test_run_json_prints_the_result_contract(client: Client, task_queue: str) -> None:
    async with running_worker(client, task_queue):
        code, out, _ = await harness(
            "run",
            "Compare Paris and Tokyo",
            "--json",
            "--id",
            f"json-{task_queue}",
            client=client,
            task_queue=task_queue,
        )
    result = json.loads(out)
    assert code == 0
    assert result["run_id"] == f"json-{task_queue}"
    assert result["status"] == "SUCCEEDED"
    for key in ("report", "plan", "attempts", "nodes", "verdict", "trace", "budget"):
        assert key in result
    node = result["nodes"][0]
    for key in (
        "id",
        "tool",
        "status",
        "error_code",
        "attempts",
        "started_at",
        "finished_at",
        "latency_ms",
    ):
        assert key in node


@pytest.mark.requires_local_server("`harness run` starts runs with the Harness* search attributes")
async def test_a_plan_from_run_json_is_accepted_by_validate_and_run_plan(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with running_worker(client, task_queue):
        _, out, _ = await harness(
            "run", "Compare Paris and Tokyo", "--json", client=client, task_queue=task_queue
        )
        plan_file = _write(tmp_path, json.dumps(json.loads(out)["plan"]))
        valid_code, valid_out, _ = await harness("validate", plan_file, "--scenario", "cities")
        code, run_out, _ = await harness(
            "run",
            "Compare Paris and Tokyo",
            "--plan",
            plan_file,
            "--json",
            client=client,
            task_queue=task_queue,
        )
    assert valid_code == 0 and "plan is valid" in valid_out
    result = json.loads(run_out)
    assert code == 0
    assert result["attempt_history"][0]["planned_by"] == "request"


@pytest.mark.requires_local_server("`harness run` starts runs with the Harness* search attributes")
async def test_no_wait_prints_the_run_id_and_status_shows_it(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        code, out, _ = await harness(
            "run", "Compare Paris and Tokyo", "--no-wait", client=client, task_queue=task_queue
        )
        run_id = out.strip()
        await client.get_workflow_handle(run_id).result()
        status_code, status_out, _ = await harness(
            "status", run_id, "--json", client=client, task_queue=task_queue
        )
    assert code == 0 and run_id.startswith("run-")
    assert status_code == 0
    assert json.loads(status_out)["status"] == "SUCCEEDED"


@pytest.mark.requires_local_server("`harness run` starts runs with the Harness* search attributes")
async def test_a_failed_run_exits_non_zero(client: Client, task_queue: str) -> None:
    async with running_worker(client, task_queue):
        code, out, _ = await harness(
            "run", "Compare some cities", "--no-ask", client=client, task_queue=task_queue
        )
    assert code == 1
    assert "FAILED_VALIDATION" in out
    assert "names no city" in out


async def test_validate_reports_every_problem_with_exit_code_one(tmp_path: Path) -> None:
    plan = Plan(
        nodes=[
            PlanNode(id="a", tool="get_populaton", arguments=[]),
            PlanNode(
                id="b",
                tool="get_timezone",
                arguments=[ArgumentBinding.node_result("city", "a")],
                deps=["c"],
            ),
            PlanNode(id="b", tool="get_population", arguments=[]),
        ]
    )
    code, out, _ = await harness("validate", _write(tmp_path, plan), "--scenario", "cities")
    assert code == 1
    lines = out.splitlines()
    assert (
        "UNKNOWN_TOOL a: tool 'get_populaton' is not in the catalog; did you mean "
        "'get_population'?" in lines
    )
    codes = {line.split(" ", 1)[0] for line in lines[:-1]}
    assert codes == {
        "DUPLICATE_NODE_ID",
        "UNKNOWN_TOOL",
        "UNKNOWN_DEPENDENCY",
        "NODE_RESULT_NOT_IN_DEPS",
        "MISSING_REQUIRED_ARGUMENT",
        "FINAL_SYNTHESIS_COUNT",
    }


async def test_validate_json_lists_issues_with_code_node_and_message(tmp_path: Path) -> None:
    code, out, _ = await harness(
        "validate", _write(tmp_path, Plan(nodes=[])), "--scenario", "cities", "--json"
    )
    assert code == 1
    assert json.loads(out) == {
        "valid": False,
        "issues": [{"code": "EMPTY_PLAN", "node_id": None, "message": "the plan has no nodes"}],
    }


async def test_bad_input_gets_one_clear_line_and_no_traceback(tmp_path: Path) -> None:
    bad_json = _write(tmp_path, "{not json")
    cases = [
        (("validate", bad_json, "--scenario", "cities"), "is not valid JSON"),
        (("validate", str(tmp_path / "missing.json"), "--scenario", "cities"), "cannot read"),
        (("tools", "--scenario", "citys"), "did you mean 'cities'?"),
        (("run", "x", "--max-concurrency", "0"), "must be at least 1"),
    ]
    for args, expected in cases:
        code, _, err = await harness(*args)
        assert code == 2, args
        assert expected in err
        assert "Traceback" not in err


async def test_run_without_a_server_says_how_to_start_one() -> None:
    env_backup = os.environ.get("TEMPORAL_ADDRESS")
    os.environ["TEMPORAL_ADDRESS"] = "127.0.0.1:1"
    try:
        code, _, err = await harness("run", "Compare Paris and Tokyo")
    finally:
        if env_backup is None:
            os.environ.pop("TEMPORAL_ADDRESS")
        else:
            os.environ["TEMPORAL_ADDRESS"] = env_backup
    assert code == 3
    assert "cannot reach Temporal at 127.0.0.1:1" in err
    assert "harness server" in err
    assert "Traceback" not in err


async def test_tools_lists_the_catalog_with_argument_schemas() -> None:
    code, out, _ = await harness("tools", "--scenario", "cities", "--json")
    catalog = json.loads(out)
    assert code == 0
    assert [tool["name"] for tool in catalog["tools"]] == [
        "get_population",
        "get_timezone",
        "summarize_city",
        "aggregate_report",
        "write_report",
        "agent",
        "harness_context_get",
        "harness_task_manage",
        "harness_fact_record",
        "harness_evidence_record",
        "harness_decision_propose",
        "harness_relation_manage",
    ]  # the scenario's, then the report writer, agent and management tools every catalog has
    assert catalog["tools"][0]["arguments_schema"]["required"] == ["city"]


async def test_status_of_a_run_no_worker_answers_for_is_one_line_and_exit_three(
    client: Client, task_queue: str
) -> None:
    handle = await start_run(client, task_queue, RunRequest(goal="Compare Paris and Tokyo"))
    code, out, err = await harness("status", handle.id, client=client, task_queue=task_queue)
    await handle.terminate("test finished")
    assert (code, out, "Traceback" in err) == (3, "", False)
    assert err.strip().startswith(f"harness: run {handle.id} is running, but no worker answered")
    assert len(err.strip().splitlines()) == 1
