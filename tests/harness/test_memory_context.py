"""The memory context: working memory first, session episodes before similar ones, never past
its budget, and the cut visible in the text and in the record."""

from __future__ import annotations

import pytest

from harness.recall.memory_context import (
    PART_CHARS,
    Memory,
    MemoryTier,
    WorkingMemory,
    assemble,
    jaccard,
    ordered,
)

WORKING = WorkingMemory(goal="Compare Rome, Atlantis and Vienna")


def episode(memory_id: str, score: float = 0.0, *, session: bool = False, at: str = "") -> Memory:
    return Memory(
        id=memory_id,
        tier=MemoryTier.EPISODIC,
        text=f"episode {memory_id}: Atlantis: no data",
        score=score,
        same_session=session,
        at=at or None,
    )


def fact(memory_id: str, score: float) -> Memory:
    return Memory(id=memory_id, tier=MemoryTier.SEMANTIC, text=f"fact {memory_id}", score=score)


def test_session_episodes_come_first_newest_first_then_similar_episodes_then_facts() -> None:
    memories = [
        fact("f-high", 0.9),
        episode("e-low", 0.2),
        episode("s-old", session=True, at="2026-11-01T10:00:00Z"),
        episode("e-high", 0.8),
        episode("s-new", session=True, at="2026-11-30T10:00:00Z"),
    ]
    assert [m.id for m in ordered(memories)] == ["s-new", "s-old", "e-high", "e-low", "f-high"]


def test_everything_that_fits_is_included_with_its_score_and_nothing_is_cut() -> None:
    context = assemble(WORKING, [episode("e-1", 0.75), fact("f-1", 0.5)], budget_chars=1000)
    assert context.text.startswith("Goal: Compare Rome, Atlantis and Vienna")
    assert "- [episodic] episode e-1: Atlantis: no data" in context.text
    assert context.cut.included == ["e-1", "f-1"] and context.cut.left_out == []
    assert context.cut.scores == {"e-1": 0.75, "f-1": 0.5}
    assert "left out" not in context.text


@pytest.mark.parametrize("budget", [45, 60, 90, 120, 200, 333])
def test_the_context_never_exceeds_its_budget_and_says_what_it_cut(budget: int) -> None:
    memories = [episode(f"e-{n}", n / 10) for n in range(10)]
    context = assemble(WORKING, memories, budget_chars=budget)
    assert len(context.text) <= budget
    assert context.cut.used_chars == len(context.text)
    assert context.cut.included + context.cut.left_out == [m.id for m in ordered(memories)]
    if context.cut.left_out:
        cut = f"... {len(context.cut.left_out)} more memories left out at the budget"
        assert context.text.endswith(cut)


def test_a_long_part_of_working_memory_is_bounded_not_the_whole_context_lost() -> None:
    working = WorkingMemory(goal="g", failures=["MISSING_INFO: Atlantis"] * 200)
    text = working.render()
    assert text.startswith("Goal: g") and len(text) < PART_CHARS + 50


def test_jaccard_is_shared_words_over_all_words() -> None:
    assert jaccard("Compare Paris and Tokyo", "compare Tokyo") == pytest.approx(2 / 4)
    assert jaccard("", "anything") == 0.0
