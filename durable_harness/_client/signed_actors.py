"""Signed actors in the CLI: the public keys a run is started with, and the signature a delivery
carries (see harness.waits.signatures). Files, not flags, hold keys, so no key lands in shell
history.

    --actor-keys FILE   JSON {"human:ops": "PUBLIC_KEY", ...}   (or $HARNESS_ACTOR_KEYS)
    --key FILE          the sender's private key              (or $HARNESS_ACTOR_KEY_FILE)

Task, scope and rules commands (harness.governance.governance_keys) are signed the same way, with
`--signing-key FILE` (their `--key` is the idempotency key) or $HARNESS_ACTOR_KEY_FILE.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from durable_harness._client.input_files import read_text_file
from durable_harness.exceptions import InvalidInput
from harness.governance.governance_keys import governance_message
from harness.governance.scope_rules import RulesCommand
from harness.governance.task_commands import TaskCommand
from harness.governance.task_graph import GraphCommand
from harness.waits.signatures import signed_message

ACTOR_KEYS_VARIABLE = "HARNESS_ACTOR_KEYS"
KEY_FILE_VARIABLE = "HARNESS_ACTOR_KEY_FILE"

SignedT = TypeVar("SignedT", bound=BaseModel)
CommandT = TypeVar("CommandT", TaskCommand, GraphCommand, RulesCommand)


def actor_keys(path: str | None) -> dict[str, str]:
    """The run's actor -> public key map; empty (no signatures asked for) when none is given."""
    path = path or os.environ.get(ACTOR_KEYS_VARIABLE)
    if not path:
        return {}
    try:
        keys = json.loads(read_text_file(path, f"actor keys {path}"))
    except (ValueError, RecursionError) as error:
        raise InvalidInput(f"actor keys {path} are not valid JSON: {error}") from None
    if not isinstance(keys, dict) or not all(
        isinstance(actor, str) and isinstance(key, str) for actor, key in keys.items()
    ):
        raise InvalidInput(f'actor keys {path} must map actors to keys: {{"human:ops": "KEY"}}')
    return keys


def signed(request: SignedT, run_id: str, key_file: str | None) -> SignedT:
    """`request` with its actor's signature for `run_id`, when a key file is given."""
    private = _private_key(key_file)
    if private is None:
        return request
    from infra.signing import sign

    signature = sign(private, signed_message(run_id, request))
    return request.model_copy(update={"signature": signature})


def signed_command(command: CommandT, scope: str, key_file: str | None) -> CommandT:
    """A task command (of a task in `scope`), a graph or a rules command with its actor's
    signature, when a key file (or $HARNESS_ACTOR_KEY_FILE) is given. A signed command needs
    an idempotency key (its signature acts once): one is made when the command has none."""
    private = _private_key(key_file)
    if private is None:
        return command
    return sign_command(command, scope, private)


def sign_command(command: CommandT, scope: str, private_key: str) -> CommandT:
    """`command` signed with `private_key` (base64 Ed25519) for `scope`, as the scope's and the
    task's workflows check it (harness.governance.governance_keys.governance_message)."""
    from infra.signing import sign

    if command.idempotency_key is None:
        command = command.model_copy(update={"idempotency_key": f"signed:{uuid.uuid4().hex}"})
    task_id = command.task_id if isinstance(command, TaskCommand) else None
    signature = sign(private_key, governance_message(scope, task_id, command))
    return command.model_copy(update={"signature": signature})


def _private_key(key_file: str | None) -> str | None:
    path = key_file or os.environ.get(KEY_FILE_VARIABLE)
    if not path:
        return None
    from infra.signing import KeyFileError, read_private_key

    try:
        return read_private_key(Path(path))
    except KeyFileError as error:
        raise InvalidInput(str(error)) from None
