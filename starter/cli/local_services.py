"""The local services a demo or an eval needs, started where missing: the Temporal dev server
(its data in the state directory, as `harness server` keeps it) with the codec server its UI
decodes payloads with, the refunds scenario's payment service and a worker; their pids and logs
go to the state directory, and `stop` ends them."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from pathlib import Path

from durable_harness._client import runs
from infra.client import connect
from infra.settings import UI_PORT_OFFSET, Settings
from infra.state import PAYMENTS_LEDGER_FILE, SERVER_DB_FILE
from payments.api import (
    DEFAULT_PORT,
    DEFAULT_URL,
    NotAuthorizedError,
    PaymentsClient,
    UnavailableError,
)
from payments.secret import SecretError, payments_secret
from scenarios.refunds import PAYMENTS_URL_VARIABLE
from starter.errors import EXIT_UNAVAILABLE, EXIT_USAGE, CliError
from starter.servers.codec_server import DEFAULT_PORT as CODEC_PORT
from starter.servers.codec_server import codec_answers, endpoint, ui_origins
from starter.servers.dev_server import dev_server_command, register_search_attributes

STARTUP_SECONDS = 60


def _spawn(name: str, command: list[str], state: Path) -> None:
    state.mkdir(parents=True, exist_ok=True)
    log = (state / f"{name}.log").open("ab")
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    (state / f"{name}.pid").write_text(str(process.pid))
    print(f"started {name} (pid {process.pid}, log {state / f'{name}.log'})", file=sys.stderr)


async def _reachable(settings: Settings) -> bool:
    try:
        await connect(settings)
    except RuntimeError:
        return False
    return True


async def _wait_until(check_name: str, check: Callable[[], Awaitable[bool]]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.5)
    raise CliError(f"{check_name} did not come up within {STARTUP_SECONDS} s", EXIT_UNAVAILABLE)


async def ensure_services(settings: Settings) -> None:
    if not await _reachable(settings):
        host, _, port = settings.temporal_address.rpartition(":")
        if host not in ("localhost", "127.0.0.1"):
            raise CliError(
                f"cannot reach Temporal at {settings.temporal_address}", EXIT_UNAVAILABLE
            )
        ui_port = int(port) + UI_PORT_OFFSET
        codec = await _ensure_codec(settings, ui_port)
        database = settings.state_dir / SERVER_DB_FILE  # the one `harness server` keeps
        command = dev_server_command(
            int(port), ui_port, database, settings.temporal_namespace, codec
        )
        _spawn("server", command, settings.state_dir)
        await _wait_until("the Temporal dev server", lambda: _reachable(settings))
    client = await connect(settings)
    added = await register_search_attributes(client, settings.temporal_namespace)
    if added:
        print(f"registered search attributes: {', '.join(added)}", file=sys.stderr)
    await _ensure_payments(settings)
    if not await runs.has_worker(client, settings.task_queue):
        _spawn("worker", [sys.executable, "-m", "worker"], settings.state_dir)
        await _wait_until("the worker", lambda: runs.has_worker(client, settings.task_queue))


async def _ensure_codec(settings: Settings, ui_port: int) -> str | None:
    """The address of the codec server the dev server's UI is pointed at, on CODEC_PORT (as
    `harness server` starts it), started unless one answers there already. None when another
    program holds the port (a notebook server often does): the demo goes on, and the UI shows
    compressed payloads undecoded."""
    if await asyncio.to_thread(codec_answers, CODEC_PORT):
        return endpoint(CODEC_PORT)
    if not port_free(CODEC_PORT):
        print(
            f"port {CODEC_PORT} is taken by another program: the UI will show payloads over "
            "128 KB undecoded (`harness codec-server --port N` and the UI's codec setting "
            "decode them)",
            file=sys.stderr,
        )
        return None
    origins = [flag for origin in ui_origins(ui_port) for flag in ("--ui-origin", origin)]
    command = [sys.executable, "-m", "starter.servers.codec_server", "--port", str(CODEC_PORT)]
    _spawn("codec", [*command, *origins], settings.state_dir)
    await _wait_until("the codec server", lambda: asyncio.to_thread(codec_answers, CODEC_PORT))
    return endpoint(CODEC_PORT)


def port_free(port: int) -> bool:
    """Whether this machine's loopback `port` can be listened on."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def _ensure_payments(settings: Settings) -> None:
    """The refunds scenario's payment service, with its ledger beside the server's database,
    and its token (created in the state directory when neither it nor HARNESS_PAYMENTS_SECRET
    exists), which the service and the worker read from the same place."""
    try:
        secret = payments_secret()
    except SecretError as error:
        raise CliError(str(error), EXIT_USAGE) from None
    payments = PaymentsClient(os.environ.get(PAYMENTS_URL_VARIABLE) or DEFAULT_URL, secret)
    if await payments.healthy():
        await _accepts_token(payments)
        return
    listen = str(urllib.parse.urlsplit(payments.base_url).port or DEFAULT_PORT)
    ledger = str(settings.state_dir / PAYMENTS_LEDGER_FILE)
    _spawn(
        "payments",
        [sys.executable, "-m", "payments", "--port", listen, "--db", ledger],
        settings.state_dir,
    )
    await _wait_until("the payment service", payments.healthy)
    await _accepts_token(payments)


async def _accepts_token(payments: PaymentsClient) -> None:
    """A service already running with another token would refuse every refund: say so now."""
    try:
        await payments.payments("-")
    except NotAuthorizedError:
        raise CliError(
            f"the payment service at {payments.base_url} refuses this token: it was started "
            "with another HARNESS_PAYMENTS_SECRET or state directory; stop it (make stop) or "
            "use the same token",
            EXIT_UNAVAILABLE,
        ) from None
    except UnavailableError as error:
        raise CliError(str(error), EXIT_UNAVAILABLE) from None


def stop(settings: Settings) -> None:
    stopped = False
    for name in ("worker", "payments", "server", "codec"):
        pid_file = settings.state_dir / f"{name}.pid"
        if not pid_file.exists():
            continue
        pid = int(pid_file.read_text())
        try:
            os.kill(pid, signal.SIGTERM)
            print(f"stopped {name} (pid {pid})")
            stopped = True
        except ProcessLookupError:
            pass
        pid_file.unlink()
    if not stopped:
        print("nothing to stop")
