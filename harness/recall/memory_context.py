"""The planner's memory context, assembled under a hard character budget.

Working memory comes first and always fits (each of its parts is bounded on its own); then
episodic memories (the session's own, newest first, then the most similar to the goal); then
semantic facts by similarity. When the budget runs out the cut is explicit, in the text the
planner reads ("... 3 more memories left out at the budget") and in the record of what was
included, so a trace can say what the planner saw and what it did not.

Pure: the store and the ranking live elsewhere; this module only orders, bounds and cuts.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, Field

DEFAULT_BUDGET_CHARS = 4000
PART_CHARS = 600
"""The most any one part of working memory may take: a long failure list is cut, not the goal."""
_WORDS = re.compile(r"[a-z0-9]+")


class MemoryTier(StrEnum):
    EPISODIC = "episodic"
    SEMANTIC = "semantic"


class Memory(BaseModel):
    """One retrieved memory: an episode of a past run, or a background fact."""

    id: str
    tier: MemoryTier
    text: str = Field(min_length=1)
    score: float = Field(default=0.0, description="Its similarity to the goal (0 to 1).")
    same_session: bool = Field(default=False, description="An episode of the run's session.")
    at: str | None = Field(default=None, description="When it happened, ISO 8601 (newest first).")
    scenario: str | None = None
    missing: list[str] = Field(
        default_factory=list, description="Entities the run it remembers found no data for."
    )


class WorkingMemory(BaseModel):
    """What the planner always receives, each part bounded."""

    goal: str
    answers: list[str] = Field(default_factory=list)
    plan_summary: str | None = None
    failures: list[str] = Field(default_factory=list)
    reused: list[str] = Field(default_factory=list, description="Results a replan keeps.")

    def render(self) -> str:
        parts = [f"Goal: {_bounded(self.goal)}"]
        for title, items in (
            ("Answers", self.answers),
            ("Failures so far", self.failures),
            ("Results that will be reused", self.reused),
        ):
            if items:
                parts.append(f"{title}: {_bounded('; '.join(items))}")
        if self.plan_summary:
            parts.append(f"Current plan: {_bounded(self.plan_summary)}")
        return "\n".join(parts)


class ContextCut(BaseModel):
    """What the assembly put in and what it left out: the trace's `memory.retrieve` data."""

    included: list[str] = Field(default_factory=list, description="Memory ids, in order.")
    scores: dict[str, float] = Field(default_factory=dict)
    left_out: list[str] = Field(default_factory=list)
    budget_chars: int
    used_chars: int


class MemoryContext(BaseModel):
    text: str = Field(description="Working memory, then the memories, then the cut, if any.")
    recalled: str = Field(default="", description="The memories' lines and the cut line only.")
    memories: list[Memory] = Field(default_factory=list, description="Those included, in order.")
    cut: ContextCut

    def remembered_from(self, scenario: str) -> dict[str, str]:
        """Each entity included episodes of this scenario found no data for -> the first such
        episode's id."""
        found: dict[str, str] = {}
        for memory in self.memories:
            if memory.tier is MemoryTier.EPISODIC and memory.scenario == scenario:
                for name in memory.missing:
                    found.setdefault(name, memory.id)
        return found

    def remembered_missing(self, scenario: str) -> list[str]:
        """Entities that included episodes of this scenario found no data for."""
        return list(self.remembered_from(scenario))


def ordered(memories: list[Memory]) -> list[Memory]:
    """Episodes of the session first, newest first; then other episodes and then facts, each
    by similarity (ties: newest first, then id, so the order never depends on the input's)."""

    def newest_first(group: list[Memory]) -> list[Memory]:  # stable sorts: id, then time
        by_id = sorted(group, key=lambda m: m.id)
        return sorted(by_id, key=lambda m: m.at or "", reverse=True)

    def by_score(group: list[Memory]) -> list[Memory]:
        return sorted(newest_first(group), key=lambda m: -m.score)

    session = newest_first([m for m in memories if m.same_session])
    rest = [m for m in memories if not m.same_session]
    episodes = [m for m in rest if m.tier is MemoryTier.EPISODIC]
    facts = [m for m in rest if m.tier is MemoryTier.SEMANTIC]
    return [*session, *by_score(episodes), *by_score(facts)]


def assemble(
    working: WorkingMemory, memories: list[Memory], budget_chars: int = DEFAULT_BUDGET_CHARS
) -> MemoryContext:
    """Working memory, then as many memories as fit, then the cut, never past the budget
    (working memory gives way to the line that says how many memories were left out)."""
    head = working.render()
    if memories and len(head) + len(_cut_line(len(memories))) + 1 > budget_chars:
        head = head[: max(budget_chars - len(_cut_line(len(memories))) - 1, 0)]  # say the cut
    lines = [head]
    used = len(head)
    included: list[Memory] = []
    cut = ContextCut(budget_chars=budget_chars, used_chars=0)
    queue = ordered(memories)
    for index, memory in enumerate(queue):
        line = f"- [{memory.tier.value}] {memory.text}"
        remaining = len(queue) - index - 1
        reserve = len(_cut_line(remaining)) + 1 if remaining else 0
        if used + 1 + len(line) + reserve > budget_chars:
            cut.left_out = [m.id for m in queue[index:]]
            break
        lines.append(line)
        used += 1 + len(line)
        cut.included.append(memory.id)
        included.append(memory)
        cut.scores[memory.id] = round(memory.score, 4)
    if cut.left_out:
        lines.append(_cut_line(len(cut.left_out)))
    text = "\n".join(lines)[:budget_chars]
    cut.used_chars = len(text)
    recalled = "\n".join(lines[1:])
    return MemoryContext(text=text, recalled=recalled, memories=included, cut=cut)


def jaccard(first: str, second: str) -> float:
    """The baseline similarity the design names: shared words over all words."""
    a, b = set(_WORDS.findall(first.lower())), set(_WORDS.findall(second.lower()))
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _cut_line(left_out: int) -> str:
    return f"... {left_out} more memories left out at the budget"


def _bounded(text: str) -> str:
    return text if len(text) <= PART_CHARS else text[: PART_CHARS - 1] + "…"
