"""`python -m payments`: the payment service, its HTTP API and its callback outbox.

    python -m payments [--host 127.0.0.1] [--port 8642] [--db STATE_DIR/payments.db]

Temporal's address and namespace come from the environment, as for the worker. The service
answers HTTP at once and reports outcomes as soon as Temporal can be reached. Its callers
authenticate with a bearer token: HARNESS_PAYMENTS_SECRET, or else payments.secret in the state
directory (HARNESS_STATE_DIR), which the service creates (mode 0600) when neither exists.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
import threading
from pathlib import Path

from infra.client import connect
from infra.logs import configure_logging
from infra.process import exit_now
from infra.settings import Settings, SettingsError
from infra.signing import KeyFileError, read_private_key
from infra.state import PAYMENTS_LEDGER_FILE, state_dir
from payments.api import DEFAULT_PORT
from payments.callbacks import Outbox
from payments.ledger import PaymentLedger
from payments.secret import SecretError, payments_secret, secret_source
from payments.server import ServiceTiming, serve
from payments.shop import SHOP_CHARGES

CONNECT_RETRY_SECONDS = 1.0
log = logging.getLogger("payments")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m payments", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--db",
        type=Path,
        default=state_dir() / PAYMENTS_LEDGER_FILE,
        help="the ledger's SQLite file (default: payments.db in the state directory)",
    )
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=0.5,
        help="how long a refund is pending before it is paid and reported",
    )
    parser.add_argument(
        "--key",
        type=Path,
        help="sign outcomes as system:payments with this Ed25519 key file, for runs with "
        "actor keys (python -m infra.signing new FILE makes one)",
    )
    parser.add_argument(
        "--hold-response-seconds",
        type=float,
        default=0.0,
        help="for crash tests: answer a refund this long after paying it",
    )
    return parser


async def _report_outcomes(
    ledger: PaymentLedger, private_key: str | None, stop: asyncio.Event
) -> None:
    while not stop.is_set():
        try:
            client = await connect(Settings.from_env())
            break
        except SettingsError as error:  # no retry can mend a configuration
            log.error("the outbox cannot connect: %s", error)
            return
        except RuntimeError as error:
            log.warning("Temporal not reachable yet (%s); retrying", error)
            await asyncio.sleep(CONNECT_RETRY_SECONDS)
    else:
        return
    outbox = asyncio.create_task(Outbox(ledger, client, private_key=private_key).run())
    await stop.wait()
    outbox.cancel()


async def _main(args: argparse.Namespace) -> None:
    try:
        private_key = read_private_key(args.key) if args.key else None
        secret = payments_secret()
    except (KeyFileError, SecretError) as error:
        print(f"payments: {error}", file=sys.stderr)
        exit_now(2)
    ledger = PaymentLedger(args.db)
    ledger.seed(SHOP_CHARGES)
    timing = ServiceTiming(args.settle_seconds, args.hold_response_seconds)
    try:
        server = serve(ledger, args.host, args.port, timing, secret)
    except OSError as error:
        print(
            f"payments: cannot listen on {args.host}:{args.port}: {error.strerror}", file=sys.stderr
        )
        exit_now(3)
    threading.Thread(target=server.serve_forever, name="payments-http", daemon=True).start()
    log.info(
        "payment service on http://%s:%s (ledger %s; callers need the token of %s)",
        args.host,
        server.server_port,
        args.db,
        secret_source(),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await _report_outcomes(ledger, private_key, stop)
    server.shutdown()


def main() -> None:
    configure_logging()
    asyncio.run(_main(_parser().parse_args()))
    exit_now(0)


if __name__ == "__main__":
    main()
