"""`harness server` runs the embedded dev server and registers the Harness* search attributes,
also on a database created without them."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest

from infra.client import connect
from infra.settings import Settings
from workflows import search_attributes

HARNESS = str(Path(sys.executable).parent / "harness")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _harness_server(tmp_path: Path) -> tuple[int, asyncio.subprocess.Process]:
    """`harness server` on free ports, with its database in `tmp_path`."""
    port, ui_port = _free_port(), _free_port()
    process = await asyncio.create_subprocess_exec(
        HARNESS,
        "server",
        "--port",
        str(port),
        "--ui-port",
        str(ui_port),
        "--codec-port",
        str(_free_port()),
        "--db",
        str(tmp_path / "temporal.db"),
        env={**os.environ, "TEMPORAL_ADDRESS": f"127.0.0.1:{port}"},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return port, process


async def test_server_registers_search_attributes_and_stops_on_sigterm(tmp_path: Path) -> None:
    port, process = await _harness_server(tmp_path)
    try:
        names: set[str] = set()
        wanted = {key.name for key in search_attributes.ALL_KEYS}
        for _ in range(120):
            await asyncio.sleep(0.5)
            try:
                client = await connect(Settings(temporal_address=f"127.0.0.1:{port}"))
                listed = await client.operator_service.list_search_attributes(
                    ListSearchAttributesRequest(namespace="default")
                )
            except Exception:
                continue
            names = set(listed.custom_attributes)
            if wanted <= names:
                break
        assert wanted <= names
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), timeout=60)
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # the dev server went with it


async def test_the_dev_server_goes_when_harness_server_is_killed_outright(tmp_path: Path) -> None:
    port, process = await _harness_server(tmp_path)
    try:
        assert await _port_becomes(port, open_=True)
    finally:
        process.kill()  # SIGKILL: no handler of harness server runs
        await process.wait()
    assert await _port_becomes(port, open_=False)  # the temporal binary went with it


async def _port_becomes(port: int, *, open_: bool) -> bool:
    for _ in range(240):
        with socket.socket() as probe:
            if (probe.connect_ex(("127.0.0.1", port)) == 0) is open_:
                return True
        await asyncio.sleep(0.25)
    return False
