"""Signed actors in the CLI: the public keys a run is started with, and the signature a delivery
carries (see harness.signatures). Files, not flags, hold keys, so no key lands in shell history.

    --actor-keys FILE   JSON {"human:ops": "PUBLIC_KEY", ...}   (or $HARNESS_ACTOR_KEYS)
    --key FILE          the sender's private key              (or $HARNESS_ACTOR_KEY_FILE)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from harness.signatures import signed_message
from starter.errors import CliError
from starter.input_files import read_text_file

ACTOR_KEYS_VARIABLE = "HARNESS_ACTOR_KEYS"
KEY_FILE_VARIABLE = "HARNESS_ACTOR_KEY_FILE"

SignedT = TypeVar("SignedT", bound=BaseModel)


def actor_keys(path: str | None) -> dict[str, str]:
    """The run's actor -> public key map; empty (no signatures asked for) when none is given."""
    path = path or os.environ.get(ACTOR_KEYS_VARIABLE)
    if not path:
        return {}
    try:
        keys = json.loads(read_text_file(path, f"actor keys {path}"))
    except (ValueError, RecursionError) as error:
        raise CliError(f"actor keys {path} are not valid JSON: {error}") from None
    if not isinstance(keys, dict) or not all(
        isinstance(actor, str) and isinstance(key, str) for actor, key in keys.items()
    ):
        raise CliError(f'actor keys {path} must map actors to keys: {{"human:ops": "KEY"}}')
    return keys


def signed(request: SignedT, run_id: str, key_file: str | None) -> SignedT:
    """`request` with its actor's signature for `run_id`, when a key file is given."""
    path = key_file or os.environ.get(KEY_FILE_VARIABLE)
    if not path:
        return request
    from infra.signing import KeyFileError, read_private_key, sign

    try:
        private = read_private_key(Path(path))
    except KeyFileError as error:
        raise CliError(str(error)) from None
    signature = sign(private, signed_message(run_id, request))
    return request.model_copy(update={"signature": signature})
