"""The Ed25519 check of signed actors (harness.waits.signatures has the rules), done in the
workflow:
pure arithmetic on the request, the run id and the run's keys, so it replays the same."""

from __future__ import annotations

import base64
import binascii

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def verify(public_key: str, signature: str, message: bytes) -> bool:
    """Whether `signature` is the key's over `message`; anything malformed is simply not."""
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        key.verify(base64.b64decode(signature, validate=True), message)
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True
