"""The payment service's bearer token: one way to find it, for every process that needs it.

The token is `HARNESS_PAYMENTS_SECRET` when that is set (and not empty), or else the file
`payments.secret` in the state directory (`infra.state.state_dir`: `HARNESS_STATE_DIR`, else a
per-user directory). When
neither exists, the first process that asks (the service, `make demo`, `harness eval`, a worker)
creates the file with a fresh random token, readable by its owner only; every later process
reads the same file. The service, the worker's client, the refunds scenario's checks, the tests
and compose all call `payments_secret`, so they cannot disagree on where the token is.

The token never appears in a log line, an error message or a repr: errors name the variable or
the file, never the value.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from infra.state import state_dir

SECRET_VARIABLE = "HARNESS_PAYMENTS_SECRET"
SECRET_FILE_NAME = "payments.secret"
MIN_SECRET_CHARACTERS = 16
"""A shorter token is refused: it could be guessed by trying."""
MAX_SECRET_CHARACTERS = 512
_FILE_MODE = 0o600


class SecretError(Exception):
    """The token cannot be had: the message says what to fix and never holds the token."""


def secret_file(environment: Mapping[str, str] | None = None) -> Path:
    """Where the token file is: `payments.secret` in the state directory, resolved as
    `Settings.from_env` resolves it (by `infra.state.state_dir`)."""
    return state_dir(environment) / SECRET_FILE_NAME


def secret_source(environment: Mapping[str, str] | None = None) -> str:
    """Where the token comes from, for a log line: the variable's name or the file's path."""
    env = os.environ if environment is None else environment
    return SECRET_VARIABLE if env.get(SECRET_VARIABLE, "").strip() else str(secret_file(env))


def payments_secret(environment: Mapping[str, str] | None = None) -> str:
    """The token: `HARNESS_PAYMENTS_SECRET`, or else the state directory's `payments.secret`,
    created (0600, atomically, never overwritten) when it does not exist."""
    env = os.environ if environment is None else environment
    given = env.get(SECRET_VARIABLE, "").strip()
    if given:
        return _checked(given, SECRET_VARIABLE)
    return read_or_create_secret(secret_file(env))


def read_or_create_secret(path: Path) -> str:
    """The token in `path`; a new one when there is no file. Two processes racing to create it
    end with one file that both read: the token is written to a private temporary file first
    and linked into place, which fails if another process linked first."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _FILE_MODE)
        try:
            with os.fdopen(descriptor, "w", encoding="ascii") as out:
                out.write(secrets.token_urlsafe(32) + "\n")
                out.flush()
                os.fsync(out.fileno())
            with contextlib.suppress(FileExistsError):  # another process was first: use its
                os.link(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
    except OSError as error:
        raise SecretError(
            f"cannot create the payment service's token file {path} ({error.strerror}); set "
            f"{SECRET_VARIABLE} or make {path.parent} writable"
        ) from None
    return _read(path)


def _read(path: Path) -> str:
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise SecretError(
            f"cannot read the payment service's token file {path} ({error.strerror})"
        ) from None
    with os.fdopen(descriptor, "r", encoding="ascii", errors="replace") as file:
        mode = stat.S_IMODE(os.fstat(file.fileno()).st_mode)
        if mode & 0o077:
            raise SecretError(
                f"the payment service's token file {path} is open to other users (mode "
                f"{mode:04o}); run chmod 600 {path}"
            )
        return _checked(file.read(MAX_SECRET_CHARACTERS + 2).strip(), str(path))


def _checked(token: str, source: str) -> str:
    if not MIN_SECRET_CHARACTERS <= len(token) <= MAX_SECRET_CHARACTERS:
        raise SecretError(
            f"the payment service's token in {source} must be {MIN_SECRET_CHARACTERS} to "
            f"{MAX_SECRET_CHARACTERS} characters long (python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))' makes one)"
        )
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise SecretError(
            f"the payment service's token in {source} must be printable ASCII without spaces"
        )
    return token
