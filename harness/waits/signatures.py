"""Signed actors: when a run is given actor keys, who may speak is a matter of keys, not names.

Whoever can signal a namespace can deliver to its runs, and an actor is a string the sender
chooses. A run started with `actor_keys` (actor -> Ed25519 public key) accepts approvals,
reconciles, async results and (since 0.10) answers only with a valid signature by a configured
actor, and nothing in the name of a configured actor without that actor's signature. The
signature covers the run id and the whole request except the signature itself, so it cannot be
moved to another run or another decision. Pure rules here; the Ed25519 arithmetic is
`infra.signing`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from pydantic import BaseModel

from harness.core.actors import Verify, actor_identity, parse_actor
from harness.waits.wait_book import WaitKind

SIGNED_KINDS = frozenset({WaitKind.APPROVAL, WaitKind.RECONCILE, WaitKind.ASYNC_OPERATION})
"""What changes money or state: always signed when a run has keys."""

SIGNED_KINDS_WITH_ANSWERS = SIGNED_KINDS | {WaitKind.USER_INPUT}
"""Since 0.10 an answer too: it steers the next plan, so in a keyed run only a keyed actor's
signed answer is taken (runs that started before keep SIGNED_KINDS; see workflows.agent_run)."""


def signed_message(run_id: str, request: BaseModel) -> bytes:
    """The exact bytes an actor signs: canonical JSON of the run id, the request's kind and its
    fields other than the signature."""
    body = {
        "run_id": run_id,
        "kind": type(request).__name__,
        "request": request.model_dump(mode="json", exclude={"signature"}),
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def canonical_actor(actor: str) -> str:
    """Before 0.10, the one spelling of an actor (`Human: ops ` is human:ops, but `Human:Ops`
    is human:Ops, which passed unsigned where human:ops had a key). Runs that started before
    0.10 keep it; later ones look keys up by harness.core.actors.actor_identity."""
    try:
        kind, name = parse_actor(actor)
    except ValueError:
        return actor
    return f"{kind.value}:{name}"


def signature_problem(
    run_id: str,
    request: BaseModel,
    kind: WaitKind | None,
    keys: Mapping[str, str],
    verify: Verify,
    signed_kinds: frozenset[WaitKind] = SIGNED_KINDS,
    identity: Callable[[str], str] = actor_identity,
) -> str | None:
    """Why `request` may not speak in this run, or None. No keys: no rule (the README says who
    may signal then). A delivery of one of `signed_kinds` must be signed by a keyed actor.
    `identity`: how actors are compared (canonical_actor before 0.10)."""
    if not keys:
        return None
    keys = {identity(actor): key for actor, key in keys.items()}
    actor = identity(str(getattr(request, "actor", "")))
    signature = getattr(request, "signature", None)
    if actor not in keys and kind not in signed_kinds:
        return None
    if actor not in keys:
        what = f"an {kind.value}" if kind is not None else "this"
        return f"{actor} has no key in this run, and {what} delivery must be signed"
    if not isinstance(signature, str) or not signature:
        return f"{actor} has a key in this run; its deliveries must carry its signature"
    if not verify(keys[actor], signature, signed_message(run_id, request)):
        return f"the signature is not {actor}'s for this delivery to this run"
    return None
