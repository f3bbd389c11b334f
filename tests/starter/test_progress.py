"""`harness run` off a terminal: plain progress lines on stderr, in the trace's order (a retry,
a wait and its delivery, a skip), while stdout keeps only the result; `--quiet` shows none. On
a pseudo terminal: the same lines, with a live status line under them."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import re
import threading
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.service import RPCError

from harness.core.errors import ErrorCode
from harness.engine.contracts import APPROVE_UPDATE
from harness.waits.deliveries import ApprovalRequest
from starter.cli.progress import SHOWN
from tests.factories import collect, delay, node, synthetic_plan
from tests.starter.test_cli import HARNESS
from tests.support import deliver_update, pending_wait, running_worker

pytestmark = pytest.mark.requires_local_server("`harness run` sets the Harness* search attributes")


def _plan_file(tmp_path: Path) -> str:
    plan = synthetic_plan(
        delay("slow", 1500),
        delay("flaky", 10),
        node("change", "side_effect", target="prod"),
        node("doomed", "fail", deps=["change"], code=ErrorCode.POLICY_VIOLATION.value),
        delay("after", 10, deps=["doomed"]),
        collect("final", ["slow", "flaky", "change", "after"]),
    )
    path = tmp_path / "plan.json"
    path.write_text(plan.model_dump_json())
    return str(path)


def _env(client: Client, task_queue: str) -> dict[str, str]:
    return {
        **os.environ,
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "HARNESS_TASK_QUEUE": task_queue,
    }


async def _run(client: Client, task_queue: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        HARNESS, "run", *args, env=_env(client, task_queue),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def _started(client: Client, run_id: str) -> None:
    handle = client.get_workflow_handle(run_id)
    for _ in range(200):  # the command starts the run in its own time
        try:
            await handle.describe()
            return
        except RPCError:
            await asyncio.sleep(0.05)


_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


async def test_progress_lines_follow_the_trace_with_a_retry_a_wait_and_a_skip(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    args = ("g", "--scenario", "synthetic", "--plan", _plan_file(tmp_path), "--id", "progress-1",
            "--fault", "delay:flaky=RATE_LIMITED*1", "--max-replans", "0", "--json")  # fmt: skip
    async with running_worker(client, task_queue):
        process = await _run(client, task_queue, *args)
        await _started(client, "progress-1")
        handle = client.get_workflow_handle("progress-1")
        wait = await pending_wait(handle, "approve-change")
        await asyncio.sleep(1.5)  # the `waiting:` line is printed from a progress page
        await deliver_update(
            handle, APPROVE_UPDATE, ApprovalRequest(wait_id=wait.id, actor="human:ada")
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    result = json.loads(out)  # stdout: the RunResult only
    lines = err.decode().splitlines()
    progress = [line.split()[1] for line in lines if line.strip()[:1].isdigit()]
    expected = [e["kind"] for e in result["trace"] if e["kind"] in {k.value for k in SHOWN}]
    assert progress == expected
    assert {"node.retry", "wait.deliver", "node.skip", "node.fail"} <= set(progress)
    waiting = next(i for i, line in enumerate(lines) if line.startswith("waiting: "))
    delivered = next(i for i, line in enumerate(lines) if " wait.deliver " in line)
    assert waiting < delivered and "progress-1  approve-change  APPROVAL" in lines[waiting]


async def test_quiet_shows_no_progress_lines(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    async with running_worker(client, task_queue):
        process = await _run(client, task_queue, "Compare Paris and Tokyo", "--quiet")
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0 and "SUCCEEDED" in out.decode()
    assert not [line for line in err.decode().splitlines() if " node." in line]


async def test_on_a_terminal_a_live_status_line_sits_under_the_same_progress_lines(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    args = ("g", "--scenario", "synthetic", "--plan", _plan_file(tmp_path), "--id", "progress-tty",
            "--fault", "delay:flaky=RATE_LIMITED*1", "--max-replans", "0")  # fmt: skip
    primary, secondary = pty.openpty()
    env = _env(client, task_queue) | {"TERM": "xterm-256color", "COLUMNS": "160"}
    written = bytearray()

    def read_all() -> None:
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal closed
                return
            if not chunk:
                return
            written.extend(chunk)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    async with running_worker(client, task_queue):
        process = await asyncio.create_subprocess_exec(
            HARNESS, "run", *args, env=env, stdin=secondary, stdout=secondary, stderr=secondary
        )
        os.close(secondary)
        await _started(client, "progress-tty")
        handle = client.get_workflow_handle("progress-tty")
        wait = await pending_wait(handle, "approve-change")
        await asyncio.sleep(2.5)  # a page or two with the wait open
        await deliver_update(
            handle, APPROVE_UPDATE, ApprovalRequest(wait_id=wait.id, actor="human:ada")
        )
        await asyncio.wait_for(process.wait(), timeout=60)
    reader.join(timeout=10)
    os.close(primary)
    screen = _ESCAPES.sub("\n", written.decode(errors="replace"))  # the live line is redrawn
    assert "\x1b[" in written.decode(errors="replace")  # drawn, not plain
    assert "run progress-tty · WAITING · attempt 1 · " in screen  # the live line, with the wait
    lines = [line.strip() for line in screen.splitlines()]
    kinds = [line.split()[1] for line in lines if line[:1].isdigit() and "pressure" in line]
    order = [kinds.index(k) for k in ("node.retry", "wait.deliver", "node.fail", "node.skip")]
    assert order == sorted(order)
    assert any(line.startswith("waiting: progress-tty  approve-change  APPROVAL") for line in lines)
    assert "FAILED_EXECUTION" in screen  # and the report after it
