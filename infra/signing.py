"""Ed25519 keys and signatures for signed actors (the `cryptography` library), base64 text; the
check itself is the workflow's (`workflows.actor_signatures`), re-exported here.

Key files hold the raw 32-byte private key as base64 on one line; `python -m infra.signing
new FILE` writes one and prints the public key to configure.
"""

from __future__ import annotations

import base64
import binascii
import sys
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from workflows.actor_signatures import verify

__all__ = ["KeyFileError", "new_private_key", "public_key", "read_private_key", "sign", "verify"]


class KeyFileError(ValueError):
    """A key file that cannot be read or does not hold a key; the message names it."""


def new_private_key() -> str:
    return _text(Ed25519PrivateKey.generate().private_bytes_raw())


def public_key(private_key: str) -> str:
    return _text(_private(private_key).public_key().public_bytes_raw())


def sign(private_key: str, message: bytes) -> str:
    return _text(_private(private_key).sign(message))


def read_private_key(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise KeyFileError(f"cannot read key file {path}: {error}") from None
    try:
        _private(text)
    except ValueError:
        raise KeyFileError(f"{path} does not hold an Ed25519 private key (base64)") from None
    return text


def _private(text: str) -> Ed25519PrivateKey:
    try:
        return Ed25519PrivateKey.from_private_bytes(base64.b64decode(text, validate=True))
    except binascii.Error as error:
        raise ValueError(str(error)) from None


def _text(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] != "new":
        print("usage: python -m infra.signing new KEY_FILE", file=sys.stderr)
        raise SystemExit(2)
    path = Path(sys.argv[2])
    if path.exists():
        print(f"{path} exists; not overwritten", file=sys.stderr)
        raise SystemExit(2)
    private = new_private_key()
    path.write_text(private + "\n", encoding="utf-8")
    path.chmod(0o600)
    print(public_key(private))


if __name__ == "__main__":
    main()
