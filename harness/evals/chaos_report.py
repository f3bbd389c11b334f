"""The recovery table of an eval with chaos, and its baseline.

For each kind of mistake: how often it was injected, into how many runs, how many of those runs
recovered (ended with a status their case expects: the other expectations, such as "no replan",
are the pass rate's business, not recovery's), how they ended (by phase name, so that a new
terminal phase shows as its own column), and what recovery cost. A run with several mistakes
counts for each of them.

The cost of recovery is measured against the same case without chaos: the median tokens and
latency of the case's runs in this eval into which nothing was injected (a case run `--repeat K`
times has some at any rate below 1). A recovered run's extra tokens and seconds are its own
minus that median; a row gives their mean over the runs that had such a clean run to compare
with (`costed`). Measuring against the same case keeps the cost of the case's own work (its
tools, its report) out of the figure, which no reading of a single trace could do for a
retry's wait inside a planner call.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from harness.engine.run import RunPhase
from harness.evals.chaos import KINDS, ChaosSettings

ANY = "any"
"""The row of every run into which some mistake was injected."""
NOT_ENDED = "NOT_ENDED"
"""The outcome of a run that never ended (cancelled by the eval, or not started)."""


class ChaosRun(Protocol):
    """What the table reads of a case's result (harness.evals.eval_report.CaseResult)."""

    case: str
    chaos: list[str]
    ended_as_expected: bool | None
    status: RunPhase | None
    tokens: int
    latency_seconds: float


class ChaosRow(BaseModel):
    kind: str
    injected: int = Field(default=0, description="Times it was injected.")
    runs: int = Field(default=0, description="Runs it was injected into.")
    recovered: int = Field(default=0, description="Of those, runs that ended as expected.")
    outcomes: dict[str, int] = Field(
        default_factory=dict, description="Of those, runs by the phase they ended in."
    )
    costed: int = Field(default=0, description="Recovered runs with a clean run to compare.")
    extra_tokens: float | None = Field(default=None, description="Mean, over the costed runs.")
    extra_seconds: float | None = Field(default=None, description="Mean, over the costed runs.")

    @property
    def recovery(self) -> float | None:
        return self.recovered / self.runs if self.runs else None


class ChaosTable(BaseModel):
    settings: ChaosSettings
    rows: list[ChaosRow]
    clean_runs: int = Field(description="Runs into which nothing was injected.")


def chaos_table(results: Sequence[ChaosRun], settings: ChaosSettings) -> ChaosTable:
    clean = _clean_medians(results)
    rows = {name: ChaosRow(kind=name) for name in [*(kind.value for kind in KINDS), ANY]}
    costs: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
    for result in results:
        if not result.chaos:
            continue
        outcome = result.status.value if result.status is not None else NOT_ENDED
        baseline = clean.get(result.case)
        for name in [*dict.fromkeys(result.chaos), ANY]:
            row = rows[name]
            row.injected += len(result.chaos) if name == ANY else result.chaos.count(name)
            row.runs += 1
            row.outcomes[outcome] = row.outcomes.get(outcome, 0) + 1
            if result.ended_as_expected:
                row.recovered += 1
                if baseline is not None:
                    costs[name].append(
                        (result.tokens - baseline[0], result.latency_seconds - baseline[1])
                    )
    for name, row in rows.items():
        row.outcomes = dict(sorted(row.outcomes.items()))
        row.costed = len(costs[name])
        if costs[name]:
            row.extra_tokens = statistics.fmean(tokens for tokens, _ in costs[name])
            row.extra_seconds = statistics.fmean(seconds for _, seconds in costs[name])
    clean_runs = sum(1 for result in results if not result.chaos and result.status is not None)
    return ChaosTable(settings=settings, rows=list(rows.values()), clean_runs=clean_runs)


def _clean_medians(results: Sequence[ChaosRun]) -> dict[str, tuple[float, float]]:
    """Each case's median tokens and latency over its runs without chaos that ended."""
    runs: dict[str, list[ChaosRun]] = {}
    for result in results:
        if not result.chaos and result.status is not None:
            runs.setdefault(result.case, []).append(result)
    return {
        case: (
            statistics.median(run.tokens for run in clean),
            statistics.median(run.latency_seconds for run in clean),
        )
        for case, clean in runs.items()
    }


def recovery_rates(table: ChaosTable) -> dict[str, float]:
    """What a baseline keeps: each kind's recovery, for the kinds injected at all."""
    return {row.kind: row.recovery for row in table.rows if row.recovery is not None}


def recovery_regressions(table: ChaosTable, baseline: dict[str, float]) -> list[str]:
    """Each kind whose recovery fell below the baseline's, in words. A kind injected in only
    one of them is not compared: with the same seed and cases the draws are the same."""
    dropped = []
    for row in table.rows:
        before, now = baseline.get(row.kind), row.recovery
        if before is not None and now is not None and now < before:
            dropped.append(
                f"{row.kind}: {row.recovered} of {row.runs} run(s) recovered ({now:.0%}), "
                f"{before:.0%} in the baseline"
            )
    return dropped
