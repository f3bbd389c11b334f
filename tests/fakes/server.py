"""A scriptable JSON-over-HTTP server on 127.0.0.1, run in a thread, for driving real SDKs offline.

A test queues replies (a status, a JSON body, headers), or functions that build a reply from the
request; requests beyond the queue go to `fallback`. Every request is recorded, in arrival order.
A request with `"stream": true` gets a successful reply as the API's stream of events, built
from the same body (tests.fakes.streams), paced and stalled as the reply says; a client that
closes a stream early is recorded in `disconnected`.

Why not respx or a mocking library: those patch the SDK's transport inside the process, so the
SDK's own HTTP stack, retries and timeouts would not run. A real socket on 127.0.0.1 is what the
worker talks to in production, only closer.
"""

from __future__ import annotations

import json
import select
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.fakes.streams import error_event, sse_events


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    streams: bool = True
    """A request with `"stream": true` gets the reply as events (False: as JSON all the same, as
    a server that ignores `stream` answers)."""
    chunk_chars: int = 24
    """Streamed: the characters of text each event carries."""
    pause: float = 0.0
    """Streamed: the seconds between two events."""
    stall_after: int | None = None
    """Streamed: after this many events, send nothing more until the client disconnects."""
    fail_after: int | None = None
    """Streamed: after this many events, send an error event (an overload) and end."""


STALL_AT_MOST_SECONDS = 60.0
"""How long a stalled stream waits for its client to disconnect."""


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Responder = Callable[[Recorded], Reply]


class FakeServer:
    """Answers POST requests to paths ending in `route`; 404 for anything else."""

    def __init__(self, route: str) -> None:
        self.route = route
        self.requests: list[Recorded] = []
        self.fallback: Responder | None = None
        self.disconnected = threading.Event()
        """Set when a client closed a stream before its end."""
        self._script: deque[Reply | Responder] = deque()
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, *replies: Reply | Responder) -> None:
        with self._lock:
            self._script.extend(replies)

    def answer(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            scripted = self._script.popleft() if self._script else self.fallback
        if scripted is None:
            return Reply(400, {"error": {"message": "fake server: no reply scripted"}})
        return scripted(request) if callable(scripted) else scripted

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join()


def _handler_for(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            path = self.path.split("?", 1)[0]
            if not path.endswith(server.route):
                self._send(Reply(404, {"error": {"message": f"no route {path}"}}))
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            body = json.loads(raw)
            reply = server.answer(Recorded("POST", path, headers, body))
            events = sse_events(body, reply.body, reply.chunk_chars)
            streamed = body.get("stream") is True and reply.status == 200 and reply.streams
            if streamed and events is not None:
                self._stream(reply, events)
            else:
                self._send(reply)

        def _stream(self, reply: Reply, events: list[bytes]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")  # the connection is kept
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            try:
                for sent, event in enumerate(events):
                    if sent == reply.stall_after:
                        self.close_connection = True
                        self._stall()
                        return
                    if sent == reply.fail_after:
                        self._chunk(error_event(server.route))
                        break
                    if sent and reply.pause:
                        time.sleep(reply.pause)
                    self._chunk(event)
                self._chunk(b"")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                server.disconnected.set()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _stall(self) -> None:
            """Wait, sending nothing, until the client closes the connection."""
            deadline = time.monotonic() + STALL_AT_MOST_SECONDS
            while time.monotonic() < deadline:
                readable, _, _ = select.select([self.connection], [], [], 0.05)
                if readable and not self.connection.recv(1):
                    server.disconnected.set()
                    return

        def _send(self, reply: Reply) -> None:
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read `requests` instead."""

    return Handler
