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
import json
import logging
import zlib
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.json_format import MessageToJson, Parse, ParseError
from google.protobuf.message import DecodeError
from temporalio.api.common.v1 import Payload, Payloads

from infra.converter import ENCODING, CompressLargePayloads

log = logging.getLogger(__name__)

DEFAULT_PORT = 8888
MAX_BODY_BYTES = 16 * 1024 * 1024
"""A request's body at most, read with this bound whatever its Content-Length says. Temporal
refuses payloads over 2 MB, so one event's payloads, base64 in JSON, fit many times over."""
MAX_DECODED_BYTES = 64 * 1024 * 1024
"""What one /decode may inflate to, all its payloads together: a zlib bomb (1,000 to 1) stops
here with a 413 instead of taking the server's memory."""
_CODEC = CompressLargePayloads()


class TooLargeError(ValueError):
    """What the request asks for passes a bound: the server answers 413."""


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
        length = self._content_length()
        if length is None:
            return
        try:
            payloads = Parse(self.rfile.read(length), Payloads())
        except (ParseError, ValueError, RecursionError) as error:  # not UTF-8, too deep
            self._reply(HTTPStatus.BAD_REQUEST, json.dumps({"error": str(error)}).encode())
            return
        try:
            if path == "decode":
                converted = decode_bounded(payloads.payloads, MAX_DECODED_BYTES)
            else:
                converted = asyncio.run(_CODEC.encode(list(payloads.payloads)))
        except TooLargeError as error:
            self._refuse_too_large(str(error))
            return
        body = MessageToJson(Payloads(payloads=converted)).encode()
        self._reply(HTTPStatus.OK, body)

    def _content_length(self) -> int | None:
        """The body's length, when it is stated and within MAX_BODY_BYTES; else the refusal is
        sent and None returned. Never a read until the client closes (`-1`, chunked)."""
        stated = (self.headers.get("Content-Length") or "").strip()
        if not stated:
            self.close_connection = True
            self._reply(HTTPStatus.LENGTH_REQUIRED, b'{"error": "Content-Length is required"}')
            return None
        if not (stated.isascii() and stated.isdigit()):
            self.close_connection = True
            body = b'{"error": "Content-Length must be a number of bytes"}'
            self._reply(HTTPStatus.BAD_REQUEST, body)
            return None
        # Twelve digits are over the bound already; int() of thousands of digits would raise.
        if len(stated) > 12 or int(stated) > MAX_BODY_BYTES:
            self._refuse_too_large(f"the body is over {MAX_BODY_BYTES} bytes")
            return None
        return int(stated)

    def _refuse_too_large(self, reason: str) -> None:
        """413, and the connection closes: whatever the client still sends is never read."""
        self.close_connection = True
        self._reply(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, json.dumps({"error": reason}).encode())

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


def decode_bounded(payloads: Sequence[Payload], limit: int) -> list[Payload]:
    """The codec's decode (infra.converter), inflating at most `limit` bytes over all the
    payloads: past that, TooLargeError, before the bomb's next chunk is made."""
    decoded: list[Payload] = []
    left = limit
    for payload in payloads:
        if payload.metadata.get("encoding") != ENCODING:
            decoded.append(payload)
            continue
        inflater = zlib.decompressobj()
        try:
            data = inflater.decompress(payload.data, left + 1)
        except zlib.error:
            decoded.append(payload)  # not zlib after all: shown as it came, as the codec does
            continue
        if len(data) > left or inflater.unconsumed_tail:
            raise TooLargeError(f"the payloads inflate to over {limit} bytes")
        if not inflater.eof:
            decoded.append(payload)  # a cut stream: likewise
            continue
        left -= len(data)
        original = Payload()
        try:
            original.ParseFromString(data)
        except DecodeError:
            original = payload
        decoded.append(original)
    return decoded
