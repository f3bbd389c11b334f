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
    assert described.search_attributes.get("HarnessGoal") == ["Compare"]  # a runs-list column


def _webhook_snippet() -> str:
    return block_after(page("waits"), "A webhook receiver needs only the public package", "python")


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


async def test_the_docs_signed_webhook_snippet_is_taken_by_a_run_with_keys_and_unsigned_is_not(
    client: Client, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/security.md's receiver signs with its key file through the public API; the same
    outcome unsigned (docs/waits.md's receiver) is refused by a run that keys the sender."""
    from durable_harness import RunFailed, Settings
    from harness.engine.run import RunRequest
    from infra.signing import new_private_key, public_key
    from tests.docs_pages import python_block_defining
    from tests.factories import collect, node, synthetic_plan
    from tests.support import start_run

    key = new_private_key()
    (tmp_path / "payments.key").write_text(key)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEMPORAL_ADDRESS", client.service_client.config.target_host)
    namespace: dict[str, object] = {}
    snippet = python_block_defining(page("security"), "signed_outcome")
    exec(compile(snippet, "docs/security.md", "exec"), namespace)
    exec(compile(_webhook_snippet(), "docs/waits.md webhook", "exec"), namespace)
    signed_outcome, unsigned = namespace["signed_outcome"], namespace["on_payment_webhook"]
    harness = Harness(client, Settings.from_env({"HARNESS_TASK_QUEUE": task_queue}))
    plan = synthetic_plan(node("job", "start_job", job="paid"), collect("end", ["job"]))
    request = RunRequest(
        goal="pay",
        scenario="synthetic",
        plan=plan,
        actor_keys={"system:payments": public_key(key)},
    )
    async with running_worker(client, task_queue):
        handle = await start_run(client, task_queue, request)
        wait = await pending_wait(handle, "op-job")
        body = {"run_id": handle.id, "operation_id": wait.operation_id, "outcome": {"ok": 1}}
        with pytest.raises(RunFailed, match="refused the delivery"):
            await unsigned(body)  # type: ignore[operator]
        accepted = await signed_outcome(  # type: ignore[operator]
            harness, handle.id, wait.operation_id, {"ok": 2}
        )
        result = await result_of(client, handle)
    assert accepted is True and result.status is RunPhase.SUCCEEDED
    job = next(n for n in result.nodes if n.id == "job")
    assert isinstance(job.result, dict) and job.result["outcome"] == {"ok": 2}


async def test_the_docs_task_snippet_works_through_harness_tasks_and_an_unknown_task_is_not_found(
    client: Client, task_queue: str
) -> None:
    """docs/python-api.md's task snippet, through the public `Harness.tasks`: the task it opens
    holds its fact; a task the scope does not have is NotFound, an agent's cancel TaskRefused."""
    import uuid

    from durable_harness import NotFound, Settings, TaskRefused
    from durable_harness.tasks import SetStatus, TaskCommand, TaskStatus
    from tests.docs_pages import python_block_defining

    namespace: dict[str, object] = {}
    snippet = python_block_defining(page("python-api"), "open_task_with_a_fact")
    exec(compile(snippet, "docs/python-api.md", "exec"), namespace)
    open_task = namespace["open_task_with_a_fact"]
    harness = Harness(client, Settings.from_env({"HARNESS_TASK_QUEUE": task_queue}))
    scope = f"api-{uuid.uuid4().hex[:8]}"
    cancel = SetStatus(status=TaskStatus.CANCELLED)
    async with running_worker(client, task_queue):
        task_id = await open_task(harness, scope)  # type: ignore[operator]
        ledger = await harness.tasks.ledger(scope, task_id)
        with pytest.raises(NotFound, match=f"scope '{scope}' has no task 'task-9'"):
            await harness.tasks.ledger(scope, "task-9")
        with pytest.raises(TaskRefused, match="an agent cannot set a task CANCELLED"):
            await harness.tasks.task_command(
                scope, TaskCommand(task_id=task_id, actor="agent:x", operation=cancel)
            )
    assert [fact.statement for fact in ledger.facts] == ["the parcel arrived damaged"]
    assert ledger.task.status is TaskStatus.ACTIVE
