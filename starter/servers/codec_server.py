"""`harness codec-server`: decodes the harness's compressed payloads for the Temporal UI and CLI.

Payloads over 128 KB (a wide run's result, a batch's input) are zlib-compressed by the harness's
codec (infra.converter); the UI and `temporal` show them as an unreadable blob unless a codec
server decodes them. This is Temporal's remote codec protocol: `POST /decode` and `POST
/encode` with `{"payloads": [...]}` (protobuf JSON of Payloads), with CORS for the UI.

    harness codec-server [--port 8888] [--ui-origin http://localhost:8233]
    temporal workflow show -w RUN_ID --codec-endpoint http://127.0.0.1:8888

`harness server`, `make demo` and docker-compose.yml start one beside the dev server and give
the UI its address (`--ui-codec-endpoint`, TEMPORAL_CODEC_ENDPOINT), so a wide run's result
reads as JSON in the UI. `python -m starter.servers.codec_server` is the same server as a
process of its own (what `make demo` and the compose service run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
import threading
import urllib.parse
import urllib.request
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


def endpoint(port: int) -> str:
    """The codec server's address as the UI (a browser on this machine) reaches it."""
    return f"http://127.0.0.1:{port}"


def codec_answers(port: int) -> bool:
    """Whether a codec server answers an empty /decode on this machine's `port`."""
    request = urllib.request.Request(
        f"{endpoint(port)}/decode",
        data=b'{"payloads": []}',
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            status: int = response.status
    except OSError:
        return False
    return status == HTTPStatus.OK


def ui_origins(ui_port: int) -> list[str]:
    """A local UI's origins: a browser opens it as localhost or as 127.0.0.1."""
    return [f"http://localhost:{ui_port}", f"http://127.0.0.1:{ui_port}"]


def serve(host: str, port: int, ui_origin: str | Sequence[str]) -> ThreadingHTTPServer:
    """The codec server, not yet serving; `ui_origin`: the UI's origins it answers with CORS."""
    allowed = (ui_origin,) if isinstance(ui_origin, str) else tuple(ui_origin)

    class Handler(_CodecHandler):
        origins = allowed

    return ThreadingHTTPServer((host, port), Handler)


class _CodecHandler(BaseHTTPRequestHandler):
    origins: tuple[str, ...]
    protocol_version = "HTTP/1.1"

    def do_OPTIONS(self) -> None:
        self.send_response(HTTPStatus.NO_CONTENT)
        self._cors()
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        # The UI asks with a query (`/decode?preserveStorageRefs=true`): the path decides.
        path = urllib.parse.urlsplit(self.path).path.rstrip("/").rsplit("/", 1)[-1]
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
        """The caller's origin when it is one of the UI's, else the first: one header, one
        origin, as CORS allows."""
        asked = self.headers.get("Origin", "")
        self.send_header(
            "Access-Control-Allow-Origin", asked if asked in self.origins else self.origins[0]
        )
        self.send_header("Vary", "Origin")
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


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m starter.servers.codec_server`: serves until SIGTERM or Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m starter.servers.codec_server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--ui-origin", action="append", help="the UI's origin, for CORS (repeatable)"
    )
    args = parser.parse_args(argv)
    try:
        server = serve(args.host, args.port, args.ui_origin or ui_origins(8233))
    except OSError as error:
        print(
            f"codec server: cannot listen on {args.host}:{args.port}: {error.strerror}",
            file=sys.stderr,
        )
        sys.exit(3)
    serve_until_signalled(server)


def serve_in_background(server: ThreadingHTTPServer) -> None:
    """Serves on a daemon thread: it goes when the process does."""
    threading.Thread(target=server.serve_forever, daemon=True).start()


def serve_until_signalled(server: ThreadingHTTPServer) -> None:
    """Serves until SIGTERM or SIGINT, then stops."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    serve_in_background(server)
    stop.wait()
    server.shutdown()


if __name__ == "__main__":
    main()
