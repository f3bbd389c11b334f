"""Retrieval: which memories the planner is given, ranked, for one goal in one scope.

The session's episodes come first (newest first, up to the depth), then the episodes and then
the facts most similar to the goal (up to the depth each). The run's own episode is never one of
its memories. Used by the retrieval activity and by `harness memory search`, so both rank alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from harness.recall.memory_context import Memory, MemoryTier
from harness.recall.memory_records import MemoryQuery, MemoryRecord, RetrievedMemories
from memory.ranking import Ranker, top

_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""When a scenario's own facts date from: before any run."""


def rank(
    query: MemoryQuery,
    stored: Sequence[MemoryRecord],
    facts: Sequence[MemoryRecord],
    ranker: Ranker,
) -> RetrievedMemories:
    """`stored`: the scope's records; `facts`: background facts from elsewhere."""
    own = f"episode-{query.run_id}"
    episodes = [r for r in stored if r.tier is MemoryTier.EPISODIC and r.id != own]
    facts = [*facts, *(r for r in stored if r.tier is MemoryTier.SEMANTIC)]
    sid = query.session_id
    session = [r for r in episodes if sid and r.session_id == sid]
    others = [r for r in episodes if not (sid and r.session_id == sid)]
    chosen: list[Memory] = []
    if session:
        scores = ranker.scores(query.goal, [r.text for r in session])
        newest = sorted(range(len(session)), key=lambda i: session[i].at, reverse=True)
        chosen += [session[i].memory(scores[i], sid) for i in newest[: query.depth]]
    for group in (others, facts):
        scores = ranker.scores(query.goal, [r.text for r in group])
        chosen += [group[i].memory(scores[i], sid) for i in top(scores, query.depth)]
    return RetrievedMemories(
        memories=chosen, ranker=ranker.name, candidates=len(episodes) + len(facts)
    )


def scenario_facts(scenario: str, texts: Sequence[str]) -> list[MemoryRecord]:
    """A scenario's own background facts as memories of every scope."""
    return [
        MemoryRecord(
            id=f"fact-{scenario}-{index}",
            tier=MemoryTier.SEMANTIC,
            scope="*",
            text=text,
            scenario=scenario,
            source=f"scenario {scenario}",
            confidence=1.0,
            at=_EPOCH,
        )
        for index, text in enumerate(texts, 1)
    ]
