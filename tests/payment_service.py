"""The real payment service for tests: `python -m payments` as its own process, on a free port,
with its own ledger file, reporting to the test's Temporal server."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client

from infra.process import die_with_parent
from payments.api import Payment, PaymentsClient

STARTUP_SECONDS = 20.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class PaymentService:
    process: subprocess.Popen[bytes]
    url: str
    ledger: Path

    @property
    def client(self) -> PaymentsClient:
        return PaymentsClient(self.url)

    async def payments(self, order_id: str | None = None) -> list[Payment]:
        return await self.client.payments(order_id)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()


def temporal_environment(client: Client) -> dict[str, str]:
    """What a process started by a test needs to reach the test's Temporal server."""
    return {
        "TEMPORAL_ADDRESS": client.service_client.config.target_host,
        "TEMPORAL_NAMESPACE": client.namespace,
    }


@asynccontextmanager
async def payment_service(
    client: Client,
    directory: Path,
    *,
    settle_seconds: float = 0.2,
    hold_response_seconds: float = 0.0,
    key_file: Path | None = None,
) -> AsyncIterator[PaymentService]:
    port = free_port()
    ledger = directory / "payments.db"
    log = (directory / "payments.log").open("ab")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "payments",
            "--port",
            str(port),
            "--db",
            str(ledger),
            "--settle-seconds",
            str(settle_seconds),
            "--hold-response-seconds",
            str(hold_response_seconds),
            *(["--key", str(key_file)] if key_file is not None else []),
        ],
        env={**os.environ, **temporal_environment(client)},
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=die_with_parent(),
    )
    service = PaymentService(process, f"http://127.0.0.1:{port}", ledger)
    try:
        await _until_healthy(service)
        yield service
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)
        log.close()


async def _until_healthy(service: PaymentService) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STARTUP_SECONDS
    while loop.time() < deadline:
        if service.process.poll() is not None:
            raise AssertionError(f"the payment service exited with {service.process.returncode}")
        if await service.client.healthy():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the payment service was not healthy within {STARTUP_SECONDS} s")
