"""A real, throwaway Postgres cluster for the tests: initdb and pg_ctl from the installed server
binaries, on a free local port, removed at the end. As root it runs as the `postgres` user
(Postgres refuses to run as root). Without the binaries the tests that need it are skipped
with a reason that says how to install them; `.ci/run` installs them, so CI always runs them."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

NOT_INSTALLED = (
    "Postgres server binaries (initdb, pg_ctl) are not installed; "
    "`apt-get install postgresql` (as .ci/run does) runs these tests"
)


def server_binaries() -> Path | None:
    """The directory of initdb and pg_ctl: on PATH, or Debian's newest /usr/lib/postgresql."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """Start a cluster; yield its URL; stop and delete it."""
    binaries = server_binaries()
    if binaries is None:
        raise FileNotFoundError(NOT_INSTALLED)
    root = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    data, log = root / "data", root / "server.log"
    user = _runner()
    if user is not None:
        os.chown(root, user.pw_uid, user.pw_gid)
    port = _free_port()

    def run(*command: str) -> None:
        wrapped = ["runuser", "-u", user.pw_name, "--", *command] if user else list(command)
        subprocess.run(wrapped, check=True, capture_output=True, timeout=120)

    try:
        run(str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
            "-E", "UTF8", "--no-locale")  # fmt: skip
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        run(str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w",
            "start")  # fmt: skip
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        if (data / "postmaster.pid").exists():
            run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(root, ignore_errors=True)


def stop_cluster(url: str) -> None:
    """Stop the cluster at `url` (one throwaway_cluster started) as an operator would, fast:
    its connections are closed, new ones refused. throwaway_cluster still removes it."""
    binaries = server_binaries()
    if binaries is None:
        raise FileNotFoundError(NOT_INSTALLED)
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute("SHOW data_directory").fetchone()
    assert row is not None
    user = _runner()
    command = [str(binaries / "pg_ctl"), "-D", str(row[0]), "-m", "fast", "-w", "stop"]
    wrapped = ["runuser", "-u", user.pw_name, "--", *command] if user else command
    subprocess.run(wrapped, check=True, capture_output=True, timeout=120)


def _runner() -> pwd.struct_passwd | None:
    """None when not root; else the `postgres` user the package made."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise FileNotFoundError(
            "running as root needs the `postgres` user to run Postgres"
        ) from None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
