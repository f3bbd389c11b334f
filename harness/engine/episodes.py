"""An episode: what one run learned, kept for the runs after it.

Made from the run's result when the run ends, whatever the ending: its goal and status, what
failed and why (the error codes and the entities found missing: "Atlantis: no data"), what each
replan changed, the verdict's reasons, and what it cost. Pure: the store lives in activities.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, JsonValue

from harness.core.errors import ErrorCode, FailureContext
from harness.core.plan import Plan
from harness.core.redaction import redact
from harness.engine.run import RunResult
from harness.recall.memory_context import MemoryTier
from harness.recall.memory_records import MemoryRecord

MAX_LISTED = 8
"""Failures and replans an episode keeps: the first few say what went wrong."""


class Episode(BaseModel):
    run_id: str
    goal: str
    scenario: str
    scope: str
    session_id: str | None = None
    status: str
    failures: list[str] = Field(default_factory=list, description="'CODE tool(args): why'.")
    missing: list[str] = Field(default_factory=list, description="Entities found with no data.")
    replans: list[str] = Field(default_factory=list, description="What each replan changed.")
    remembered: dict[str, str] = Field(
        default_factory=dict,
        description="Entities the planner was told had no data -> the memory that said so. Kept "
        "apart from `missing`: forgetting that memory makes later runs look again.",
    )
    verdict: list[str] = Field(default_factory=list)
    attempts: int = 1
    tool_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    wall_seconds: float = 0.0
    ended_at: datetime

    @property
    def id(self) -> str:
        return f"episode-{self.run_id}"

    def text(self) -> str:
        """One paragraph the planner reads (and BM25 ranks): the goal leads, so similar goals
        find it."""
        replans = self.attempts - 1
        parts = [f"Run of '{self.goal}' ({self.scenario}) ended {self.status}"]
        parts[0] += f" after {replans} replan(s)." if replans else " in one attempt."
        if self.missing:
            parts.append("No data: " + ", ".join(self.missing) + ".")
        if self.remembered:
            parts.append("Planned around memory: no data for " + ", ".join(self.remembered) + ".")
        if self.failures:
            parts.append("Failures: " + "; ".join(self.failures) + ".")
        if self.replans:
            parts.append("Replans: " + "; ".join(self.replans) + ".")
        if self.verdict:
            parts.append("Verdict: " + "; ".join(self.verdict) + ".")
        parts.append(
            f"Cost: {self.tool_calls} tool calls, {self.tokens} tokens, ${self.cost_usd:.4f}, "
            f"{self.wall_seconds:.1f} s."
        )
        return " ".join(parts)

    def record(self) -> MemoryRecord:
        data: dict[str, JsonValue] = {
            "status": self.status,
            "attempts": self.attempts,
            "failures": list[JsonValue](self.failures),
            "replans": list[JsonValue](self.replans),
            "remembered": dict[str, JsonValue](self.remembered),
            "verdict": list[JsonValue](self.verdict),
            "tool_calls": self.tool_calls,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "wall_seconds": self.wall_seconds,
            "goal": self.goal,
        }
        return MemoryRecord(
            id=self.id,
            tier=MemoryTier.EPISODIC,
            scope=self.scope,
            text=self.text(),
            session_id=self.session_id,
            scenario=self.scenario,
            run_id=self.run_id,
            missing=self.missing,
            source=f"run {self.run_id}",
            at=self.ended_at,
            data=data,
        )


def episode_of(
    result: RunResult, scope: str, ended_at: datetime, remembered: dict[str, str] | None = None
) -> Episode:
    """The episode of a finished run; `remembered`: what its planner was told had no data."""
    failures = [f for attempt in result.attempt_history for f in attempt.failure]
    plans = [attempt.plan for attempt in result.attempt_history]
    verdict = list(result.verdict.reasons) if result.verdict else []
    if result.error and result.status.value != "SUCCEEDED" and not failures:
        verdict = [*verdict, result.error]
    return Episode(
        run_id=result.run_id,
        goal=result.goal,
        scenario=result.scenario,
        scope=scope,
        session_id=result.session_id,
        status=result.status.value,
        failures=list(dict.fromkeys(_described(f) for f in failures))[:MAX_LISTED],
        missing=missing_entities(failures),
        remembered=dict(remembered or {}),
        replans=[
            change
            for index in range(1, len(plans))
            if (change := _change(index + 1, plans[index - 1], plans[index]))
        ][:MAX_LISTED],
        verdict=verdict[:MAX_LISTED],
        attempts=max(result.attempts, 1),
        tool_calls=result.counts.tool_calls,
        tokens=result.usage.total_tokens,
        cost_usd=round(result.usage.cost_usd, 6),
        wall_seconds=round(result.wall_seconds, 3),
        ended_at=ended_at,
    )


def missing_entities(failures: list[FailureContext]) -> list[str]:
    """The names a tool said it has no data for: the string arguments of MISSING_INFO failures."""
    names: list[str] = []
    for failure in failures:
        if failure.code != ErrorCode.MISSING_INFO.value or not failure.arguments:
            continue
        for value in failure.arguments.values():
            if isinstance(value, str) and value and value not in names:
                names.append(value)
    return names[:MAX_LISTED]


def _described(failure: FailureContext) -> str:
    """Redacted before it is cut: a key cut short no longer looks like a key."""
    call = failure.tool or failure.node_id or "plan"
    if failure.arguments:
        args = ", ".join(f"{k}={v}" for k, v in sorted(failure.arguments.items()))
        call = redact(f"{call}({args})")[:120]
    return f"{failure.code} {call}: {redact(failure.message)[:160]}"


def _change(attempt: int, before: Plan | None, after: Plan | None) -> str | None:
    if before is None or after is None:
        return None
    old, new = set(before.node_ids()), set(after.node_ids())
    dropped, added = sorted(old - new), sorted(new - old)
    if not dropped and not added:
        return f"attempt {attempt} planned the same nodes again"
    said = []
    if dropped:
        said.append("dropped " + ", ".join(dropped[:6]) + ("…" if len(dropped) > 6 else ""))
    if added:
        said.append("added " + ", ".join(added[:6]) + ("…" if len(added) > 6 else ""))
    return f"attempt {attempt} " + " and ".join(said)
