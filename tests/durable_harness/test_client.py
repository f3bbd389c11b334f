"""The Python API as an application uses it: the README's script runs as written, and a run
started through the API waits, is answered and ends like one started by the CLI."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from temporalio.client import Client

from durable_harness._client.run_results import result_of
from durable_harness.client import Harness
from harness.engine.run import RunPhase
from harness.engine.trace import TraceKind
from tests.docs_pages import README as DOCS_README
from tests.docs_pages import block_after, page
from tests.support import pending_wait, running_worker

pytestmark = pytest.mark.requires_local_server("runs start with the Harness* search attributes")
README = DOCS_README.read_text()


def _readme_script() -> str:
    return block_after(README, "## From Python", "python")


async def test_the_readme_script_runs_as_written_and_prints_the_report(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    script = tmp_path / "use_it.py"
    script.write_text(_readme_script())
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "HARNESS_TASK_QUEUE": task_queue,
        "PYTHONPATH": str(Path(__file__).parent.parent.parent),
    }
    async with running_worker(client, task_queue):
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(script), env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), timeout=90)
    assert process.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert lines[0].startswith("run.start") and any(s.startswith("run.finish") for s in lines)
    assert any(line.startswith("node.finish pop_tokyo DONE") for line in lines)
    assert any(line.startswith("SUCCEEDED # City comparison") for line in lines)


async def test_a_run_started_through_the_api_is_searchable_answered_and_followed(
    client: Client, task_queue: str
) -> None:
    harness = await Harness.connect(
        address=client.service_client.config.target_host, task_queue=task_queue
    )
    async with running_worker(client, task_queue):
        run = await harness.start("Compare", scenario="cities")  # names no city: it asks
        await pending_wait(client.get_workflow_handle(run.run_id), "question-1")
        assert [w.id for w in await run.waits()] == ["question-1"]
        receipt = await run.answer("question-1", "Paris and Tokyo", actor="human:ada")
        assert receipt.accepted
        kinds = [event.kind async for event in run.progress()]
        result = await run.result()
    assert result.status is RunPhase.SUCCEEDED
    assert kinds[0] is TraceKind.RUN_START and kinds[-1] is TraceKind.RUN_FINISH
    assert TraceKind.WAIT_DELIVER in kinds
    described = await client.get_workflow_handle(run.run_id).describe()
    assert described.search_attributes.get("HarnessScenario") == ["cities"]


def _webhook_snippet() -> str:
    return block_after(page("waits"), "A webhook receiver needs only a Temporal client.", "python")


async def test_the_docs_webhook_snippet_reaches_the_run_through_the_projects_settings(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snippet connects with the project's settings and its signal completes a job."""
    from harness.engine.run import RunRequest
    from tests.factories import collect, node, synthetic_plan
    from tests.support import start_run

    monkeypatch.setenv("TEMPORAL_ADDRESS", client.service_client.config.target_host)
    namespace: dict[str, object] = {}
    exec(compile(_webhook_snippet(), "docs/waits.md webhook", "exec"), namespace)
    on_payment_webhook = namespace["on_payment_webhook"]
    plan = synthetic_plan(node("job", "start_job", job="paid"), collect("end", ["job"]))
    async with running_worker(client, task_queue):
        handle = await start_run(
            client, task_queue, RunRequest(goal="pay", scenario="synthetic", plan=plan)
        )
        wait = await pending_wait(handle, "op-job")
        body = {"run_id": handle.id, "operation_id": wait.operation_id, "outcome": {"ok": 1}}
        await on_payment_webhook(body)  # type: ignore[operator]
        result = await result_of(client, handle)
    assert result.status is RunPhase.SUCCEEDED
    job = next(n for n in result.nodes if n.id == "job")
    assert isinstance(job.result, dict) and job.result["outcome"] == {"ok": 1}
