"""`harness codec-server`: decodes the harness's compressed payloads for the Temporal UI and CLI.

Payloads over 128 KB (a wide run's result, a batch's input) are zlib-compressed by the harness's
codec (infra.converter); the UI and `temporal` show them as an unreadable blob unless a codec
server decodes them. This is Temporal's remote codec protocol: `POST /decode` and `POST
/encode` with `{"payloads": [...]}` (protobuf JSON of Payloads), with CORS for the UI.

    harness codec-server [--port 8888] [--ui-origin http://localhost:8233]
    temporal workflow show -w RUN_ID --codec-endpoint http://127.0.0.1:8888
"""

from __future__ import annotations

import asyncio
import logging
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.json_format import MessageToJson, Parse, ParseError
from temporalio.api.common.v1 import Payloads

from infra.converter import CompressLargePayloads

log = logging.getLogger(__name__)

DEFAULT_PORT = 8888
MAX_BODY_BYTES = 64 * 1024 * 1024
_CODEC = CompressLargePayloads()


def serve(host: str, port: int, ui_origin: str) -> ThreadingHTTPServer:
    class Handler(_CodecHandler):
        origin = ui_origin

    return ThreadingHTTPServer((host, port), Handler)


class _CodecHandler(BaseHTTPRequestHandler):
    origin: str
    protocol_version = "HTTP/1.1"

    def do_OPTIONS(self) -> None:
        self.send_response(HTTPStatus.NO_CONTENT)
        self._cors()
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        path = self.path.rstrip("/").rsplit("/", 1)[-1]
        if path not in ("decode", "encode"):
            self._reply(HTTPStatus.NOT_FOUND, b'{"error": "POST /decode or /encode"}')
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._reply(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, b'{"error": "body too large"}')
            return
        try:
            payloads = Parse(self.rfile.read(length), Payloads())
        except ParseError as error:
            self._reply(HTTPStatus.BAD_REQUEST, f'{{"error": "{error}"}}'.encode())
            return
        convert = _CODEC.decode if path == "decode" else _CODEC.encode
        converted = asyncio.run(convert(list(payloads.payloads)))
        body = MessageToJson(Payloads(payloads=converted)).encode()
        self._reply(HTTPStatus.OK, body)

    def _reply(self, status: HTTPStatus, body: bytes) -> None:
        self.send_response(status)
        self._cors()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", self.origin)
        self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
        self.send_header("Access-Control-Allow-Credentials", "true")

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)
