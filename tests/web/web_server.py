"""`harness web` as its own process for the tests, on a free port, reaching the test's Temporal
server and task queue; and a reader of its Server-Sent Events."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from temporalio.client import Client

from infra.process import die_with_parent
from tests.payment_service import free_port, temporal_environment

STARTUP_SECONDS = 120.0


@dataclass
class WebServer:
    client: Client
    task_queue: str
    log: Path
    token: str | None = None
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def start(self) -> None:
        environment = {
            **os.environ,
            **temporal_environment(self.client),
            "HARNESS_TASK_QUEUE": self.task_queue,
        }
        command = [sys.executable, "-m", "starter.cli.app", "web", "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, *(["--token", self.token] if self.token else [])],
            env=environment,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent(),
        )
        await self._until_answering()

    def kill(self) -> None:
        """SIGKILL: the streams it serves break as a crash breaks them."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    async def _until_answering(self) -> None:
        assert self.process is not None
        async with httpx2.AsyncClient(headers=self.headers) as http:
            for _ in range(int(STARTUP_SECONDS / 0.2)):
                if self.process.poll() is not None:
                    log = self.log.read_text(errors="replace")[-2000:]
                    raise AssertionError(f"harness web exited {self.process.returncode}: {log}")
                try:
                    if (await http.get(f"{self.url}/", timeout=2)).status_code == 200:
                        return
                except httpx2.TransportError:
                    pass
                await asyncio.sleep(0.2)
        raise AssertionError(f"harness web never answered on {self.url}")


@asynccontextmanager
async def harness_web(
    client: Client, task_queue: str, directory: Path, token: str | None = None
) -> AsyncIterator[WebServer]:
    server = WebServer(client, task_queue, directory / "web.log", token)
    await server.start()
    try:
        yield server
    finally:
        server.kill()


@dataclass
class Message:
    """One Server-Sent Event as the wire carried it: `id` None when it had no id line."""

    event: str
    data: str
    id: str | None = None

    def json(self) -> Any:
        return json.loads(self.data)


async def messages(response: httpx2.Response) -> AsyncIterator[Message]:
    """The messages of an open event stream, as a browser's EventSource parses them."""
    fields: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line == "":
            if "data" in fields:
                yield Message(fields.get("event", "message"), fields["data"], fields.get("id"))
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            joined = name == "data" and name in fields
            fields[name] = f"{fields[name]}\n{value}" if joined else value


async def read_stream(
    http: httpx2.AsyncClient, url: str, headers: dict[str, str] | None = None
) -> list[Message]:
    """Every message of a stream, to its end (the server closes it when the run has ended)."""
    async with http.stream("GET", url, headers=headers, timeout=120) as response:
        assert response.status_code == 200, await response.aread()
        return [message async for message in messages(response)]
