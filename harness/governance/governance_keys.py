"""Signed governance acts: where a scope has keys, who decides is a matter of keys, not names.

A task command, a graph command or a rules command names its actor, and any client of the
namespace can write any name. A scope may hold actor keys (actor -> Ed25519 public key,
base64): then every command by a keyed actor must carry that actor's signature, and the acts
that approve or decide (a review, a completion, a cancellation, a decision, a contract, a
lesson's resolution, a promotion, a revocation, a key change) must be by a keyed actor with a
valid signature. A scope without keys accepts what it accepted before keys existed.

The signature covers the scope, the task (for a task command), the command's kind and every
field but the signature, as canonical JSON, so it cannot be moved to another task, another
scope or another decision. A signed command carries an idempotency key: sending the same signed
bytes again is a duplicate, never a second act (a history shows the signed command to whoever
may read it).

The first keys of a scope are trust on first use: while the scope has none, a person
(`human:`) sets them, and must be among them and sign with the key being set (so nobody sets a
key they do not hold and locks the scope). Once keys are set, changing them is itself a signed
act of a keyed person. Pure rules here; the Ed25519 arithmetic is `workflows.actor_signatures`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping

from pydantic import BaseModel

from harness.core.actors import ActorKind, Verify, actor_identity, parse_actor

MAX_KEYS = 50
"""The most actors a scope keys: enough for a team, small in the scope's state."""
PUBLIC_KEY_BYTES = 32
HARNESS_ACTOR = "system:harness"
"""The worker's own name for what a run reports to its task: the worker holds no private key,
so this name is never keyed (a run's reports would all be refused)."""

DECIDING_ACTS: dict[str, str] = {
    "review": "a review",
    "complete": "a completion",
    "resolve_decision": "a decision",
    "set_contract": "a contract",
    "resolve_lesson": "a lesson's resolution",
    "promote_lesson": "a promotion",
    "revoke_rule": "a revocation",
    "set_keys": "a key change",
}
"""Operation -> what it is called: the acts that approve or decide, by a keyed actor only where
a scope has keys (cancelling a task too: see deciding_act)."""


def deciding_act(operation: BaseModel) -> str | None:
    """What the operation decides ("a review", ...), or None for an act anyone may do."""
    op = str(getattr(operation, "op", ""))
    if op == "set_status" and str(getattr(operation, "status", "")) == "CANCELLED":
        return "a cancellation"
    return DECIDING_ACTS.get(op)


def governance_message(scope: str, task_id: str | None, command: BaseModel) -> bytes:
    """The exact bytes an actor signs: canonical JSON of the scope, the task (None for a
    scope's own commands), the command's kind and its fields other than the signature."""
    body = {
        "scope": scope,
        "task_id": task_id,
        "kind": type(command).__name__,
        "command": command.model_dump(mode="json", exclude={"signature"}),
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def governance_problem(
    scope: str,
    task_id: str | None,
    command: BaseModel,
    keys: Mapping[str, str],
    verify: Verify,
) -> str | None:
    """Why `command` may not be applied under the scope's `keys`, or None. No keys: no rule.
    The keys' actors are identities (harness.core.actors.actor_identity), as set_keys stores
    them."""
    operation = getattr(command, "operation", None)
    new_keys = _first_keys(keys, operation)
    if new_keys is not None:  # trust on first use: signed with a key being set
        keys = new_keys
    if not keys:
        return None
    actor = actor_identity(str(getattr(command, "actor", "")))
    act = deciding_act(operation) if isinstance(operation, BaseModel) else None
    if actor not in keys:
        if act is None:
            return None
        return f"{actor} has no key in scope '{scope}', and {act} must be signed by a keyed actor"
    signature = getattr(command, "signature", None)
    if not isinstance(signature, str) or not signature:
        return f"{actor} has a key in scope '{scope}': its commands must carry its signature"
    if getattr(command, "idempotency_key", None) is None:
        return "a signed command carries an idempotency key, so its signature acts once"
    if not verify(keys[actor], signature, governance_message(scope, task_id, command)):
        where = f"task '{task_id}' of scope '{scope}'" if task_id else f"scope '{scope}'"
        return f"the signature is not {actor}'s for this command to {where}"
    return None


def _first_keys(keys: Mapping[str, str], operation: object) -> dict[str, str] | None:
    """The keys a scope's first set_keys sets (they sign it), or None."""
    if keys or str(getattr(operation, "op", "")) != "set_keys":
        return None
    wanted = getattr(operation, "keys", {})
    return identities(wanted) if isinstance(wanted, dict) else None


def identities(keys: Mapping[str, str]) -> dict[str, str]:
    """The key map with each actor written as its one identity."""
    return {actor_identity(actor): key for actor, key in keys.items()}


def key_change_problem(
    current: Mapping[str, str], actor: str, wanted: Mapping[str, str]
) -> str | None:
    """What is wrong with `actor` replacing a scope's keys `current` with `wanted` (the
    signature is governance_problem's). An empty `wanted` turns the scope's keys off."""
    kind, _ = parse_actor(actor)
    if kind is not ActorKind.HUMAN:
        return "only a person sets a scope's keys: they say who decides here"
    if len(wanted) > MAX_KEYS:
        return f"a scope keys at most {MAX_KEYS} actors, not {len(wanted)}"
    for name, key in wanted.items():
        problem = _entry_problem(name, key)
        if problem is not None:
            return problem
    new = identities(wanted)
    if len(new) != len(wanted):
        return "two of the keys name one actor (actors are compared however they are spelt)"
    if new and not any(parse_actor(name)[0] is ActorKind.HUMAN for name in new):
        return "the keys name no person: nobody could change them again"
    if not current and actor_identity(actor) not in new:
        return (
            f"{actor_identity(actor)} sets the scope's first keys, so they must be among them "
            "and sign with their own"
        )
    return None


def _entry_problem(actor: str, key: str) -> str | None:
    try:
        kind, _ = parse_actor(actor)
    except ValueError as error:
        return str(error)
    if kind is ActorKind.AGENT:
        return f"{actor}: an agent is never keyed; it proposes, a keyed actor decides"
    if actor_identity(actor) == HARNESS_ACTOR:
        return f"{HARNESS_ACTOR} is the worker's own name, which holds no key"
    try:
        raw = base64.b64decode(key, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != PUBLIC_KEY_BYTES:
        return f"{actor}: the key is not an Ed25519 public key (32 bytes, base64)"
    return None
