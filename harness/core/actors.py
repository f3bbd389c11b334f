"""Actors: who speaks to a run or a task, and the one way to read an actor string."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from enum import StrEnum


class ActorKind(StrEnum):
    HUMAN = "human"
    SYSTEM = "system"
    AGENT = "agent"


def parse_actor(actor: str) -> tuple[ActorKind, str]:
    """`human:alice` -> (HUMAN, 'alice'); raises ValueError with the accepted forms."""
    kind, _, name = actor.partition(":")
    try:
        return ActorKind(kind.strip().lower()), _require_name(name, actor)
    except ValueError:
        raise ValueError(
            f"actor '{actor}' must look like human:NAME, system:NAME or agent:NAME"
        ) from None


def _require_name(name: str, actor: str) -> str:
    if not name.strip():
        raise ValueError(actor)
    return name.strip()


def actor_identity(actor: str) -> str:
    """Who `actor` is, as one string: every spelling of one actor gives the same one.

    `Human: Alice`, `human:alice`, `HUMAN:ALICE` and its fullwidth form (U+FF48...) are all
    `human:alice`:
    Unicode compatibility forms are folded (NFKC), case is folded (casefold, so `ß` is `ss`),
    invisible format characters (zero-width spaces, joiners, direction marks) are dropped, and
    runs of whitespace become one space, none around the colon. Every gateway compares actors,
    and looks up their keys, by this, so no second spelling is a second person. An actor that
    does not parse is its own identity, unchanged (the gateways refuse it anyway)."""
    folded = _fold(actor)
    try:
        kind, name = parse_actor(folded)
    except ValueError:
        return actor
    return f"{kind.value}:{name}"


def same_actor(first: str, second: str) -> bool:
    """One actor however it is written (see actor_identity)."""
    return actor_identity(first) == actor_identity(second)


def _fold(text: str) -> str:
    normal = unicodedata.normalize("NFKC", text).casefold()
    normal = unicodedata.normalize("NFKC", normal)  # casefold may leave a non-NFKC form
    visible = "".join(c for c in normal if unicodedata.category(c) != "Cf")
    return " ".join(visible.split())


Verify = Callable[[str, str, bytes], bool]
"""(public key, signature, message) -> whether the signature is the key's, both base64."""
