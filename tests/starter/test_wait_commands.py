"""The wait commands as a user runs them: waits, approve, answer, deliver, cancel, report."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from durable_harness._client.run_results import result_of
from harness.engine.run import RunRequest, RunResult
from tests.factories import approval_request, collect, delay, node, synthetic_plan
from tests.starter.test_cli import harness
from tests.support import pending_wait, running_worker, start_run
from workflows import AgentRunWorkflow


def _approval_plan_request() -> RunRequest:
    plan = synthetic_plan(
        node("change", "side_effect", target="prod"),
        collect("final", ["change"]),
    )
    return RunRequest(goal="change prod", scenario="synthetic", plan=plan)


@pytest.mark.requires_local_server("the CLI starts runs with the Harness* search attributes")
async def test_agent_approval_is_refused_and_the_wait_stays_pending_until_a_human_approves(
    client: Client, task_queue: str
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(
            client, task_queue, searchable=True, request=_approval_plan_request()
        )
        await pending_wait(handle, "approve-change")
        listed: tuple[int, str, str] = (0, "", "")
        for _ in range(50):  # the pending-waits search attribute is eventually visible
            listed = await harness("waits", client=client, task_queue=task_queue)
            if handle.id in listed[1]:
                break
            await asyncio.sleep(0.1)
        refused = await harness(
            "approve",
            handle.id,
            "approve-change",
            "--actor",
            "agent:planner",
            client=client,
            task_queue=task_queue,
        )
        still = await harness("waits", handle.id, "--json", client=client, task_queue=task_queue)
        approved = await harness(
            "approve",
            handle.id,
            "approve-change",
            "--actor",
            "human:ops",
            client=client,
            task_queue=task_queue,
        )
        result: RunResult = await result_of(client, handle)
    assert handle.id in listed[1] and "APPROVAL" in listed[1]
    assert refused[0] == 2  # refused by the CLI before anything is sent; the run would refuse too
    assert refused[2].strip() == "harness: agent:planner is an agent; agents can never approve"
    pending = json.loads(still[1])[handle.id]
    assert [(w["id"], w["status"]) for w in pending] == [("approve-change", "PENDING")]
    assert approved[0] == 0 and approved[1].startswith("accepted")
    assert result.status.value == "SUCCEEDED"


@pytest.mark.requires_local_server("the CLI starts runs with the Harness* search attributes")
async def test_deliver_by_operation_and_cancel_from_the_cli(
    client: Client, task_queue: str
) -> None:
    plan = synthetic_plan(
        node("job", "start_job", job="x"),
        collect("final", ["job"]),
    )
    async with running_worker(client, task_queue):
        handle = await start_run(
            client,
            task_queue,
            searchable=True,
            request=RunRequest(goal="job", scenario="synthetic", plan=plan),
        )
        await pending_wait(handle, "op-job")
        waits = await handle.query(AgentRunWorkflow.waits)
        delivered = await harness(
            "deliver",
            handle.id,
            "--operation",
            str(waits[0].operation_id),
            "--data",
            '{"status": "done"}',
            client=client,
            task_queue=task_queue,
        )
        first: RunResult = await result_of(client, handle)
        slow = synthetic_plan(delay("long", 600_000), collect("final", ["long"]))
        second = await start_run(
            client,
            task_queue,
            searchable=True,
            request=RunRequest(goal="slow", scenario="synthetic", plan=slow),
        )
        await asyncio.sleep(0.5)
        cancelled = await harness("cancel", second.id, client=client, task_queue=task_queue)
        second_result: RunResult = await result_of(client, second)
    assert delivered[0] == 0, delivered
    assert first.status.value == "SUCCEEDED"
    assert cancelled[0] == 0
    assert second_result.status.value == "CANCELLED"
    assert second_result.error is not None and "cancelled from the CLI" in second_result.error


async def test_bad_data_for_deliver_gets_a_clear_error(client: Client, task_queue: str) -> None:
    code, _, err = await harness(
        "deliver", "some-run", "w1", "--data", "{oops", client=client, task_queue=task_queue
    )
    assert code == 2 and "--data is not valid JSON" in err and "Traceback" not in err
    code, _, err = await harness(
        "approve", "some-run", "w1", "--actor", "robot", client=client, task_queue=task_queue
    )
    assert code == 2 and "human:NAME, system:NAME or agent:NAME" in err


@pytest.mark.requires_local_server("the CLI starts runs with the Harness* search attributes")
async def test_report_writes_three_charts_a_plan_graph_and_an_html_page(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    run_id = f"report-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        code, _, err = await harness(
            "run", "Compare Paris and Tokyo", "--id", run_id, client=client, task_queue=task_queue
        )
        assert code == 0, err
        code, out, err = await harness(
            "report", run_id, "--out", str(tmp_path), client=client, task_queue=task_queue
        )
    assert code == 0, err
    names = sorted(Path(line).name for line in out.splitlines())
    assert names == ["index.html", "plan.png", "pressure.png", "timeline.png", "tokens.png"]
    for name in names[1:]:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "index.html").read_text()
    assert "City comparison" in page
    assert "<tr><th>goal</th><td>Compare Paris and Tokyo</td></tr>" in page
    assert "<tr><th>passed</th><td>yes</td></tr>" in page
    assert f'/namespaces/default/workflows/{run_id}">This run in the Temporal UI</a>' in page


async def test_the_report_of_a_running_run_shows_it_waiting_as_it_stands_so_far(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, approval_request())
        await pending_wait(handle, "approve-change")
        code, _, err = await harness(
            "report", handle.id, "--out", str(tmp_path), client=client, task_queue=task_queue
        )
        await handle.terminate("test finished")
    assert code == 0, err
    page = (tmp_path / "index.html").read_text()
    assert f"<title>run {handle.id}: WAITING</title>" in page
    assert "(the run has not ended)" in page
    assert "<td>change</td><td>side_effect</td><td>DATA</td><td>WAITING</td>" in page
    assert "<td>(running)</td>" in page  # the attempt under way
    assert (tmp_path / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
