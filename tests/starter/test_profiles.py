"""The connection as the Temporal CLI keeps it: a profile of a config file (the one `temporal
config set` writes) is honoured by the worker, `harness run` and `harness status`, with no
TEMPORAL_* variable set; `--address`, `--namespace` and `--profile` stand in for them."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from temporalio.client import Client

from tests.starter.test_cli import HARNESS

pytestmark = pytest.mark.requires_local_server("a worker process in real time")


def _without_temporal_variables() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("TEMPORAL_")}


def _profile_file(tmp_path: Path, client: Client) -> Path:
    path = tmp_path / "temporal.toml"
    path.write_text(
        "[profile.default]\n"
        'address = "127.0.0.1:1"\n'  # nothing listens there: the profile chosen must win
        "[profile.dev]\n"
        f'address = "{client.service_client.config.target_host}"\n'
        f'namespace = "{client.namespace}"\n'
    )
    return path


async def _harness(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        HARNESS, *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"harness {' '.join(args)} did not finish in 60 s") from None
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_a_profile_reaches_the_server_for_the_worker_run_and_status(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    env = _without_temporal_variables() | {
        "TEMPORAL_CONFIG_FILE": str(_profile_file(tmp_path, client)),
        "TEMPORAL_PROFILE": "dev",
        "HARNESS_TASK_QUEUE": task_queue,
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        code, out, err = await _harness(env, "run", "Compare Paris and Tokyo")
        assert code == 0, err
        run_id = out.splitlines()[-1].split(" · ")[1].removeprefix("run ")
        code, status, err = await _harness(env, "status", run_id)
        assert code == 0 and "SUCCEEDED" in status, err
        default_only = {k: v for k, v in env.items() if k != "TEMPORAL_PROFILE"}
        code, _, err = await _harness(default_only, "status", run_id)
        assert code == 3 and "127.0.0.1:1" in err  # the default profile: nobody there
        code, status, err = await _harness(default_only, "status", run_id, "--profile", "dev")
        assert code == 0 and "SUCCEEDED" in status, err
        address = client.service_client.config.target_host
        code, status, err = await _harness(default_only, "--address", address, "status", run_id)
        assert code == 0 and "SUCCEEDED" in status, err
    finally:
        worker.send_signal(signal.SIGTERM)
        _, worker_err = worker.communicate(timeout=30)
    assert b"Traceback" not in worker_err


async def test_a_profile_that_is_not_in_the_file_is_one_line_exit_2(
    client: Client, tmp_path: Path
) -> None:
    env = _without_temporal_variables() | {
        "TEMPORAL_CONFIG_FILE": str(_profile_file(tmp_path, client)),
    }
    code, _, err = await _harness(env, "status", "r", "--profile", "staging")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "profile 'staging'" in err and "TEMPORAL_PROFILE" in err
