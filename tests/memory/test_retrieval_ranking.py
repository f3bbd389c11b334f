"""Retrieval: the session's episodes first, newest first, then the most similar episodes, then
facts; BM25 finds the episode that shares the goal's rare words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness.recall.memory_context import MemoryTier, WorkingMemory, assemble
from harness.recall.memory_records import MemoryQuery, MemoryRecord
from memory.ranking import Bm25Ranker, JaccardRanker, top
from memory.retrieval import rank

T0 = datetime(2026, 11, 30, tzinfo=UTC)


def episode(
    memory_id: str, text: str, session: str | None = None, minutes: int = 0
) -> MemoryRecord:
    return MemoryRecord(
        id=memory_id,
        tier=MemoryTier.EPISODIC,
        scope="default",
        text=text,
        session_id=session,
        scenario="cities",
        at=T0 + timedelta(minutes=minutes),
    )


def test_session_episodes_come_first_newest_first_then_similar_episodes_then_facts(
    tmp_path: Path,
) -> None:
    stored = [
        episode("s-old", "Run of 'Compare Lisbon and Oslo' ended SUCCEEDED.", "s1", 1),
        episode("s-new", "Run of 'Compare Berlin' ended SUCCEEDED.", "s1", 5),
        episode(
            "close",
            "Run of 'Compare Rome, Atlantis and Paris' ended SUCCEEDED. No data: Atlantis.",
            None,
            2,
        ),
        episode("far", "Run of 'Which game fits a budget' ended SUCCEEDED.", None, 3),
    ]
    facts = [
        MemoryRecord(
            id="f-rome",
            tier=MemoryTier.SEMANTIC,
            scope="*",
            text="Rome, Italy: the Colosseum.",
            at=T0,
        ),
    ]
    query = MemoryQuery(
        run_id="r9",
        goal="Compare Rome and Atlantis",
        scenario="cities",
        scope="default",
        session_id="s1",
    )
    found = rank(query, stored, facts, Bm25Ranker())
    assert [m.id for m in found.memories] == ["s-new", "s-old", "close", "f-rome"]
    context = assemble(WorkingMemory(goal=query.goal), found.memories)
    assert context.cut.included == ["s-new", "s-old", "close", "f-rome"]
    assert (
        context.text.index("Berlin") < context.text.index("Lisbon") < context.text.index("No data")
    )


def test_the_runs_own_episode_is_never_its_own_memory(tmp_path: Path) -> None:
    stored = [episode("episode-r9", "Run of 'Compare Rome' ended SUCCEEDED.")]
    query = MemoryQuery(run_id="r9", goal="Compare Rome", scenario="cities", scope="default")
    assert rank(query, stored, [], Bm25Ranker()).memories == []


def test_bm25_ranks_the_text_that_shares_the_rare_word_first_and_scales_to_one() -> None:
    texts = ["Compare Paris and Tokyo", "Compare Rome and Atlantis", "Compare Oslo"]
    scores = Bm25Ranker().scores("Atlantis compare", texts)
    assert top(scores, 3)[0] == 1 and max(scores) == 1.0


def test_a_query_that_shares_no_word_scores_zero_everywhere() -> None:
    texts = ["Compare Paris and Tokyo", "Refund order A-1001"]
    assert Bm25Ranker().scores("zebra", texts) == [0.0, 0.0]
    assert JaccardRanker().scores("zebra", texts) == [0.0, 0.0]
    assert top([0.0, 0.0], 3) == []
