"""Worker processes (`python -m worker`) on one task queue, for tests that kill one with SIGKILL
and watch another take over: each is known by the identity Temporal records for its polls."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from infra.process import die_with_parent
from scenarios.refunds import PAYMENTS_URL_VARIABLE
from tests.payment_service import PaymentService, temporal_environment

STARTUP_SECONDS = 120.0
STICKY_TIMEOUT_SECONDS = "2"
"""These tests kill a worker with SIGKILL: the run's next workflow task waits this long on the
dead worker's sticky queue before another takes it (the SDK's 10 s otherwise, a wait each
kill test sat out). The path is the one a production worker takes, sooner: the task times out on
the sticky queue and goes to the task queue (WORKFLOW_TASK_TIMED_OUT in the history)."""


class Workers:
    """Worker processes on one task queue, each known by the identity Temporal records."""

    def __init__(
        self,
        client: Client,
        task_queue: str,
        service: PaymentService | None,
        log: Path,
        environment: Mapping[str, str] | None = None,
    ):
        self._client = client
        self._task_queue = task_queue
        self._service = service
        self._log = log
        self._environment = dict(environment or {})
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    async def start(self) -> str:
        environment = {
            **os.environ,
            **temporal_environment(self._client),
            "HARNESS_TASK_QUEUE": self._task_queue,
            "HARNESS_LLM_PROVIDER": "scripted",
            "HARNESS_STICKY_TIMEOUT_SECONDS": STICKY_TIMEOUT_SECONDS,
            **({PAYMENTS_URL_VARIABLE: self._service.url} if self._service else {}),
            **self._environment,
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "worker"],
            env=environment,
            stdout=self._log.open("ab"),
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent(),
        )
        identity = f"{process.pid}@{socket.gethostname()}"
        self.processes[identity] = process
        await self._until_polling(identity)
        return identity

    def kill(self, identity: str) -> None:
        process = self.processes.pop(identity)
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop_all(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            process.wait(timeout=20)

    async def _until_polling(self, identity: str) -> None:
        """A worker process imports for some seconds first, more on a busy machine."""
        process = self.processes[identity]
        for _ in range(int(STARTUP_SECONDS / 0.1)):
            if process.poll() is not None:
                log = self._log.read_text(errors="replace")[-2000:]
                raise AssertionError(f"worker {identity} exited with {process.returncode}: {log}")
            response = await self._client.workflow_service.describe_task_queue(
                DescribeTaskQueueRequest(
                    namespace=self._client.namespace,
                    task_queue=TaskQueue(name=self._task_queue),
                    task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
                )
            )
            if any(poller.identity == identity for poller in response.pollers):
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"worker {identity} never polled {self._task_queue}")


@asynccontextmanager
async def workers(
    client: Client,
    task_queue: str,
    service: PaymentService | None,
    log: Path,
    environment: Mapping[str, str] | None = None,
) -> AsyncIterator[Workers]:
    """`environment`: more variables for each worker (the state directory, say); `service`:
    the payment service the refunds tools call, if the test needs one."""
    pool = Workers(client, task_queue, service, log, environment)
    try:
        yield pool
    finally:
        pool.stop_all()


def worker_refusal(environment: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m worker` with `environment` as its whole environment, run to its exit, for
    tests of a worker that refuses to start (no Temporal server is needed for that)."""
    return subprocess.run(
        [sys.executable, "-m", "worker"],
        cwd=Path(__file__).parent.parent,
        env=dict(environment),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
