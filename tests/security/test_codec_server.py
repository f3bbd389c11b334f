"""F10: the codec server reads a bounded body and inflates a bounded amount. A zlib bomb (a
quarter of a megabyte that inflates to 256 MB) gets a short 413, and the server's memory never
holds what the bomb would have become; a body over the bound is refused unread, with /decode
and /encode alike."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import subprocess
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload

from infra.converter import ENCODING, CompressLargePayloads
from starter.servers.codec_server import MAX_BODY_BYTES, MAX_DECODED_BYTES

ROOT = Path(__file__).resolve().parents[2]
SERVE = (
    "from starter.servers.codec_server import serve\n"
    "server = serve('127.0.0.1', 0, 'http://localhost:8233')\n"
    "print(server.server_address[1], flush=True)\n"
    "server.serve_forever()\n"
)
BOMB_INFLATES_TO = 256 * 1024 * 1024
SOCKET_SECONDS = 120.0
"""Only so that a server that waits for a body nobody sends fails the test, not hangs it."""


@dataclass
class CodecServer:
    process: subprocess.Popen[bytes]
    port: int

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=SOCKET_SECONDS)
        try:
            connection.request("POST", path, body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def raw(self, head: str) -> bytes:
        """Send only a request's head, as written, and read the answer to the end."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=SOCKET_SECONDS) as sock:
            sock.sendall(head.encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            return answer

    def peak_memory_bytes(self) -> int:
        """The server's peak resident set (VmHWM) so far."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(line.split()[1]) * 1024


@pytest.fixture
def codec_server() -> Iterator[CodecServer]:
    """The worktree's own codec server, in a process of its own so that its memory is its own."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield CodecServer(process, port)
    finally:
        process.terminate()
        process.wait(timeout=30)


def zlib_bomb(inflated_bytes: int) -> bytes:
    """A compressed Payload whose data is `inflated_bytes` zeros, made a megabyte at a time."""
    length, varint = inflated_bytes, bytearray()
    while length > 0x7F:
        varint.append(length & 0x7F | 0x80)
        length >>= 7
    varint.append(length)
    compressor = zlib.compressobj(9)
    parts = [compressor.compress(b"\x12" + bytes(varint))]  # field 2 (data), length-delimited
    zeros = bytes(1 << 20)
    parts += [compressor.compress(zeros) for _ in range(inflated_bytes >> 20)]
    return b"".join([*parts, compressor.flush()])


def payloads_json(*payloads: tuple[bytes, bytes]) -> bytes:
    """Temporal's protobuf JSON of Payloads: (encoding, data) each, base64 as protobuf has it."""
    listed = [
        {"metadata": {"encoding": base64.b64encode(encoding).decode()}, "data": data}
        for encoding, data in ((e, base64.b64encode(d).decode()) for e, d in payloads)
    ]
    return json.dumps({"payloads": listed}).encode()


def test_codec_server_answers_a_zlib_bomb_413(codec_server: CodecServer) -> None:
    bomb = zlib_bomb(BOMB_INFLATES_TO)
    assert len(bomb) < 300_000 and BOMB_INFLATES_TO > 2 * MAX_DECODED_BYTES

    status, body = codec_server.post("/decode", payloads_json((ENCODING, bomb)))

    assert status == 413, body[:200]
    assert len(body) < 1000 and b"inflate" in body
    assert codec_server.peak_memory_bytes() < BOMB_INFLATES_TO


@pytest.mark.parametrize("path", ["/decode", "/encode"])
def test_codec_server_refuses_an_oversized_body_413(codec_server: CodecServer, path: str) -> None:
    """The head alone says the body is too large: refused before a byte of it is read (a server
    that started reading would wait for it, and the read would time out)."""
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY_BYTES + 1}\r\n\r\n"

    answer = codec_server.raw(head)

    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


@pytest.mark.parametrize(
    ("length_header", "status"),
    [("Content-Length: -1\r\n", b"400"), ("Transfer-Encoding: chunked\r\n", b"411")],
)
def test_codec_server_never_waits_for_a_body_of_unstated_length(
    codec_server: CodecServer, length_header: str, status: bytes
) -> None:
    head = f"POST /decode HTTP/1.1\r\nHost: x\r\n{length_header}\r\n"

    answer = codec_server.raw(head)

    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]


async def test_codec_server_still_decodes_what_the_harness_compressed(
    codec_server: CodecServer,
) -> None:
    original = Payload(metadata={"encoding": b"json/plain"}, data=b'"' + b"x" * 300_000 + b'"')
    [compressed] = await CompressLargePayloads().encode([original])
    assert compressed.metadata["encoding"] == ENCODING

    status, body = codec_server.post("/decode", payloads_json((ENCODING, compressed.data)))

    assert status == 200, body[:200]
    [decoded] = json.loads(body)["payloads"]
    assert base64.b64decode(decoded["data"]) == original.data
