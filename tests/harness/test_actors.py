"""parse_actor: the one way to read who is speaking to a run."""

from __future__ import annotations

import pytest

from harness.core.actors import ActorKind, parse_actor


@pytest.mark.parametrize(
    ("actor", "kind", "name"),
    [
        ("human:alice", ActorKind.HUMAN, "alice"),
        ("system:deploy-bot", ActorKind.SYSTEM, "deploy-bot"),
        ("agent:planner", ActorKind.AGENT, "planner"),
        (" Human : Alice ", ActorKind.HUMAN, "Alice"),
        ("system:ci:job-7", ActorKind.SYSTEM, "ci:job-7"),
    ],
)
def test_an_actor_is_a_kind_and_a_name(actor: str, kind: ActorKind, name: str) -> None:
    assert parse_actor(actor) == (kind, name)


@pytest.mark.parametrize("actor", ["alice", "robot:r2", "human:", "agent: ", ":alice", ""])
def test_a_malformed_actor_is_refused_with_the_accepted_forms(actor: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_actor(actor)

    assert str(refused.value) == (
        f"actor '{actor}' must look like human:NAME, system:NAME or agent:NAME"
    )
