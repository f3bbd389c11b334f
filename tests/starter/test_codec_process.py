"""The codec server as `make demo` and docker-compose run it (`python -m
starter.servers.codec_server`): it answers the UI's requests, query string and all, with CORS
for the UI's origins, and stops on SIGTERM."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

from starter.servers.codec_server import codec_answers
from tests.payment_service import free_port

UI = "http://localhost:18233"


def decode_empty(port: int, origin: str) -> tuple[int, str]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/decode?preserveStorageRefs=true",  # as the UI 2.54 asks
        data=b'{"payloads": []}',
        headers={"Content-Type": "application/json", "Origin": origin, "X-Namespace": "default"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.headers["Access-Control-Allow-Origin"]


def test_the_codec_process_answers_the_uis_origins_and_stops_on_sigterm() -> None:
    port = free_port()
    other = "http://127.0.0.1:18233"
    process = subprocess.Popen(
        [sys.executable, "-m", "starter.servers.codec_server", "--port", str(port),
         "--ui-origin", UI, "--ui-origin", other],
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not codec_answers(port):
            assert time.monotonic() < deadline, "the codec server did not answer"
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.2)
        assert decode_empty(port, other) == (200, other)
        assert decode_empty(port, "http://evil.example") == (200, UI)  # not the caller's
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert process.returncode == 0


def test_a_codec_port_in_use_is_one_line_and_exit_3() -> None:
    port = free_port()
    first = subprocess.Popen(
        [sys.executable, "-m", "starter.servers.codec_server", "--port", str(port)]
    )
    try:
        deadline = time.monotonic() + 60
        while not codec_answers(port):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        second = subprocess.run(
            [sys.executable, "-m", "starter.servers.codec_server", "--port", str(port)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        first.terminate()
        first.wait(timeout=20)
    assert second.returncode == 3
    assert second.stderr.strip().splitlines() == [
        f"codec server: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
