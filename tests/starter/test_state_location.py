"""One state directory whatever the current one: a worker started in one folder, and
`harness memory list`, `harness eval --resume` and `harness server` typed in another, use the
same memory store, the same eval reports and the same server database, and leave nothing in
either folder. No HARNESS_STATE_DIR here: the per-user default is what is tested, under an
XDG_STATE_HOME of the test's own (the real home is never written)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from temporalio.client import Client

from harness.evals.eval_case import CaseExpectations, CaseOptions, EvalCase
from harness.evals.eval_report import EvalRequest
from infra.process import die_with_parent
from infra.state import state_dir
from tests.starter.test_cli import HARNESS
from tests.starter.test_server_command import _free_port
from workflows import EvalSuiteWorkflow

pytestmark = pytest.mark.requires_local_server("eval runs are child workflows in real time")

ROOT = Path(__file__).resolve().parents[2]
GOAL = "Compare Paris and Tokyo"
DEADLINE_SECONDS = 120


async def _harness_in(folder: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        HARNESS,
        *args,
        cwd=folder,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def _until(check: Callable[[], bool], what: str) -> None:
    for _ in range(DEADLINE_SECONDS * 10):
        if check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what} within {DEADLINE_SECONDS} s")


async def test_a_worker_in_one_folder_and_the_cli_in_another_share_one_state_directory(
    client: Client, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    state = tmp_path / "xdg" / "durable-harness"
    assert state_dir() == state
    folder_a, folder_b = tmp_path / "a", tmp_path / "b"
    folder_a.mkdir()
    folder_b.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),  # this checkout's code, from any folder
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "HARNESS_TASK_QUEUE": task_queue,
        "HARNESS_LLM_PROVIDER": "scripted",
    }
    with (tmp_path / "worker.log").open("ab") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "worker"],
            cwd=folder_a,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent(),
        )
    try:
        case = EvalCase(
            scenario="cities",
            id="two",
            goal=GOAL,
            options=CaseOptions(memory=True),  # a case remembers nothing unless told to
            expect=CaseExpectations(mentions=["Paris"]),
        )
        eval_id = f"eval-state-{task_queue}"
        await client.start_workflow(
            EvalSuiteWorkflow.run, EvalRequest(cases=[case]), id=eval_id, task_queue=task_queue
        )
        code, _, err = await _harness_in(folder_b, env, "eval", "--resume", eval_id, "--no-start")
        assert code == 0, err
        assert json.loads((state / "evals" / eval_id / "report.json").read_text())["results"]

        code, listed, err = await _harness_in(folder_b, env, "memory", "list", "--json")
        assert code == 0, err
        assert [episode["data"]["goal"] for episode in json.loads(listed)] == [GOAL]
    finally:
        worker.terminate()
        worker.wait(timeout=60)

    port, ui_port = _free_port(), _free_port()
    server = await asyncio.create_subprocess_exec(
        HARNESS,
        "server",
        "--port",
        str(port),
        "--ui-port",
        str(ui_port),
        "--codec-port",
        str(_free_port()),
        cwd=folder_b,
        env={**env, "TEMPORAL_ADDRESS": f"127.0.0.1:{port}"},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await _until((state / "temporal.db").exists, "the server's database is made")
    finally:
        server.send_signal(signal.SIGTERM)
        await asyncio.wait_for(server.wait(), timeout=60)
    assert {"evals", "memory.db", "temporal.db"} <= {path.name for path in state.iterdir()}
    assert (list(folder_a.iterdir()), list(folder_b.iterdir())) == ([], [])
