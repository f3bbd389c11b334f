"""Actors: who speaks to a run or a task, and the one way to read an actor string."""

from __future__ import annotations

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
