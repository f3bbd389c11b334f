"""A scriptable JSON-over-HTTP server on 127.0.0.1, run in a thread, for driving real SDKs offline.

A test queues replies (a status, a JSON body, headers), or functions that build a reply from the
request; requests beyond the queue go to `fallback`. Every request is recorded, in arrival order.

Why not respx or a mocking library: those patch the SDK's transport inside the process, so the
SDK's own HTTP stack, retries and timeouts would not run. A real socket on 127.0.0.1 is what the
worker talks to in production, only closer.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


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
            self._send(server.answer(Recorded("POST", path, headers, json.loads(raw))))

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
