"""Finding F5: where the payment service's token comes from. One function reads it for every
process: HARNESS_PAYMENTS_SECRET, or else payments.secret in the state directory, created 0600
(atomically, never overwritten) by the first process that needs it; the real service creates it,
keeps it across restarts, and never writes it to its log."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from infra.process import die_with_parent
from infra.settings import Settings
from payments.api import NotAuthorizedError, PaymentsClient
from payments.ledger import PaymentLedger
from payments.secret import (
    SECRET_FILE_NAME,
    SECRET_VARIABLE,
    SecretError,
    payments_secret,
    read_or_create_secret,
)
from payments.server import ServiceTiming, serve
from starter.cli.local_services import _ensure_payments
from starter.errors import CliError
from tests.payment_service import STARTUP_SECONDS, free_port

ROOT = Path(__file__).resolve().parents[2]


def state(directory: Path) -> dict[str, str]:
    return {"HARNESS_STATE_DIR": str(directory)}


def test_secret_file_is_created_0600_and_reused(tmp_path: Path) -> None:
    first = payments_secret(state(tmp_path / "state"))
    path = tmp_path / "state" / SECRET_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) >= 32 and first in path.read_text()
    assert payments_secret(state(tmp_path / "state")) == first
    assert path.read_text().strip() == first  # never overwritten


def test_the_variable_is_the_secret_when_set_and_no_file_is_made(tmp_path: Path) -> None:
    token = "a-token-given-by-the-operator-1234"
    assert payments_secret({**state(tmp_path), SECRET_VARIABLE: token}) == token
    assert not (tmp_path / SECRET_FILE_NAME).exists()
    assert payments_secret({**state(tmp_path), SECRET_VARIABLE: "  "}) != token  # empty: unset


def test_processes_racing_to_create_the_secret_all_read_one(tmp_path: Path) -> None:
    path = tmp_path / SECRET_FILE_NAME
    found: list[str] = []
    start = threading.Barrier(8)

    def create() -> None:
        start.wait()
        found.append(read_or_create_secret(path))

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 8 and len(set(found)) == 1
    assert [p.name for p in tmp_path.iterdir()] == [SECRET_FILE_NAME]  # no temporary left


@pytest.mark.parametrize(
    ("content", "mode", "problem"),
    [
        ("a-long-enough-token-but-shared-0644", 0o644, "chmod 600"),
        ("short", 0o600, "16 to 512 characters"),
        ("a token with spaces in it, long enough", 0o600, "without spaces"),
    ],
)
def test_a_bad_secret_is_refused_with_what_to_fix_and_without_the_secret(
    tmp_path: Path, content: str, mode: int, problem: str
) -> None:
    path = tmp_path / SECRET_FILE_NAME
    path.write_text(content)
    path.chmod(mode)
    with pytest.raises(SecretError) as refused:
        payments_secret(state(tmp_path))
    assert problem in str(refused.value) and content not in str(refused.value)
    assert path.read_text() == content  # never overwritten


def test_the_secret_lives_where_the_settings_put_the_state_directory(tmp_path: Path) -> None:
    env = state(tmp_path / "elsewhere")
    payments_secret(env)
    assert (Settings.from_env(env).state_dir / SECRET_FILE_NAME).exists()


@contextmanager
def service_process(directory: Path, **env: str) -> Iterator[tuple[str, Path]]:
    """`python -m payments` with its state in `directory`; its Temporal is unreachable, which
    only delays its outbox."""
    port = free_port()
    log = directory / "payments.log"
    environment = {key: value for key, value in os.environ.items() if key != SECRET_VARIABLE} | {
        "HARNESS_STATE_DIR": str(directory),
        "TEMPORAL_ADDRESS": "127.0.0.1:1",
        **env,
    }
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "payments",
                "--port",
                str(port),
                "--db",
                str(directory / "p.db"),
            ],
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent(),
        )
        url = f"http://127.0.0.1:{port}"
        try:
            asyncio.run(_until_healthy(process, url))
            yield url, log
        finally:
            process.terminate()
            process.wait(timeout=30)


async def _until_healthy(process: subprocess.Popen[bytes], url: str) -> None:
    client = PaymentsClient(url, "unused-for-health-only")
    for _ in range(int(STARTUP_SECONDS / 0.1)):
        if process.poll() is not None:
            raise AssertionError(f"the payment service exited with {process.returncode}")
        if await client.healthy():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the payment service was not healthy within {STARTUP_SECONDS} s")


def test_the_service_creates_the_secret_file_0600_and_a_restart_reuses_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / SECRET_FILE_NAME
    with service_process(tmp_path) as (url, log):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        token = payments_secret(state(tmp_path))
        assert asyncio.run(PaymentsClient(url, token).payments()) == []
        with pytest.raises(NotAuthorizedError):
            asyncio.run(PaymentsClient(url, "x" * 40).payments())
    with service_process(tmp_path) as (url, log):
        assert payments_secret(state(tmp_path)) == token
        assert asyncio.run(PaymentsClient(url, token).payments()) == []
    logged = log.read_text()
    assert "refused GET /payments" in logged and token not in logged


def test_the_service_takes_the_variable_over_the_file_and_never_logs_it(tmp_path: Path) -> None:
    token = "the-operators-token-for-this-service"
    with service_process(tmp_path, HARNESS_PAYMENTS_SECRET=token) as (url, log):
        assert asyncio.run(PaymentsClient(url, token).payments()) == []
        with pytest.raises(NotAuthorizedError) as refused:
            asyncio.run(PaymentsClient(url, token[:-1]).payments())
    assert not (tmp_path / SECRET_FILE_NAME).exists()
    assert token not in log.read_text() and token not in str(refused.value)
    assert SECRET_VARIABLE in log.read_text()  # it says where the token came from


async def test_demo_and_eval_refuse_a_running_service_with_another_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = PaymentLedger(tmp_path / "payments.db")
    server = serve(ledger, "127.0.0.1", 0, ServiceTiming(), "the-token-the-service-was-given")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("HARNESS_PAYMENTS_URL", f"http://127.0.0.1:{server.server_port}")
    try:
        with pytest.raises(CliError, match="refuses this token"):
            await _ensure_payments(Settings.from_env())
        # make demo and harness eval made the token file they would hand the service
        assert (Settings.from_env().state_dir / SECRET_FILE_NAME).exists()
        monkeypatch.setenv(SECRET_VARIABLE, "the-token-the-service-was-given")
        await _ensure_payments(Settings.from_env())
    finally:
        server.shutdown()
        server.server_close()


def test_compose_gives_the_service_and_every_worker_the_same_token() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    payments, worker = services["payments"], services["worker"]
    for name in (SECRET_VARIABLE, "HARNESS_STATE_DIR"):
        assert payments["environment"][name] == worker["environment"][name], name
    assert payments["environment"][SECRET_VARIABLE] == "${HARNESS_PAYMENTS_SECRET:-}"
    state_dir = payments["environment"]["HARNESS_STATE_DIR"]
    shared = {v for v in payments["volumes"] if v.endswith(f":{state_dir}")}
    assert shared and shared <= set(worker["volumes"])
