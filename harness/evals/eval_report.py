"""An eval's messages and its report: each case's result, the pass rates, latency percentiles,
tokens and cost per scenario and overall, and the comparison with a baseline."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from harness.engine.run import RunPhase
from harness.evals.chaos import MAX_CHAOS_MARKS, ChaosKind, ChaosSettings
from harness.evals.chaos_report import ChaosTable, chaos_table, recovery_rates
from harness.evals.eval_case import EvalCase
from harness.governance.state_size import json_bytes

MAX_REPEAT = 20
MAX_EVAL_CONCURRENCY = 64
DEFAULT_EVAL_CONCURRENCY = 4
DEFAULT_CASE_TIMEOUT_SECONDS = 600.0
MAX_SUITE_BYTES = 1_500_000
"""What a suite carries through continue-as-new, one payload that Temporal refuses past 2 MB:
its request (the cases, their plans) and the result of every case it finished. Reckoned before
it starts, with every result at its largest (a suite takes no commands that could grow it), so
it may sit closer to the limit than an entity's measured state: the bundled 183 cases fit
6 repeats."""
MAX_UNMET_BYTES = 600
"""A case result's unmet expectations, as JSON: the first in full where they fit, then cut."""
UNMET_TAIL_BYTES = 32
"""Room for the last of them: "and N more"."""


def bounded_unmet(problems: Sequence[str]) -> list[str]:
    """The unmet expectations a case result keeps, at most MAX_UNMET_BYTES as JSON: those that
    fit, the next cut to fit, and how many more there were."""
    kept: list[str] = []
    fits = MAX_UNMET_BYTES - UNMET_TAIL_BYTES
    for index, problem in enumerate(problems):
        if json_bytes([*kept, problem]) <= fits:
            kept.append(problem)
            continue
        cut = _longest_prefix(problem, lambda text: json_bytes([*kept, text + "..."]) <= fits)
        if cut:
            kept.append(cut + "...")
            index += 1
        if index < len(problems):
            kept.append(f"and {len(problems) - index} more")
        return kept
    return kept


def _longest_prefix(text: str, fits: Callable[[str], bool]) -> str:
    """The longest start of `text` that `fits` (which holds for a start if for a longer one)."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(text[:middle]) else (low, middle - 1)
    return text[:low]


def suite_problem(request: EvalRequest, eval_id: str) -> str | None:
    """A suite whose request and results would not fit MAX_SUITE_BYTES, said with what to do.
    Each case's result is reckoned at its largest: its names, tags and unmet expectations."""
    results = sum(
        _largest_result(case, eval_id, request.repeat, chaos=request.chaos is not None)
        * request.repeat
        for case in request.cases
    )
    size = json_bytes(request) + results
    if size <= MAX_SUITE_BYTES:
        return None
    runs = len(request.cases) * request.repeat
    return (
        f"this suite of {runs:,} case run(s) would carry {size:,} bytes, more than "
        f"{MAX_SUITE_BYTES:,}: split its cases into smaller suites, or repeat them less"
    )


def _largest_result(case: EvalCase, eval_id: str, repeat: int, *, chaos: bool) -> int:
    largest = CaseResult(
        case=case.key,
        scenario=case.scenario,
        repeat=repeat,
        run_id=f"{eval_id}.{case.scenario}.{case.id}.{repeat}",
        tags=case.tags,
        passed=False,
        unmet=["x" * (MAX_UNMET_BYTES - len('[""]'))],
        status=RunPhase.FAILED_VERIFICATION,
        attempts=10**9,
        replans=10**9,
        tool_calls=10**9,
        tokens=10**18,
        cost_usd=-1.2345678901234567e-300,
        latency_seconds=-1.2345678901234567e-300,
        judge_score=-1.2345678901234567e-300,
        chaos=[max(ChaosKind, key=len).value] * MAX_CHAOS_MARKS if chaos else [],
        ended_as_expected=False if chaos else None,
    )
    return json_bytes(largest) + 1  # and the comma before it


class UnreadableEvalRequestError(ValueError):
    """A workflow input that does not decode as an EvalRequest: the eval fails (not its task)."""


class CaseResult(BaseModel):
    case: str = Field(description="scenario/id")
    scenario: str
    repeat: int = 1
    run_id: str
    tags: list[str] = Field(default_factory=list)
    passed: bool
    unmet: list[str] = Field(default_factory=list)
    status: RunPhase | None = Field(default=None, description="None: the run never ended.")
    attempts: int = 0
    replans: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    latency_seconds: float = 0.0
    judge_score: float | None = None
    chaos: list[str] = Field(
        default_factory=list, description="The mistakes --chaos injected into the run, in order."
    )
    ended_as_expected: bool | None = Field(
        default=None,
        description="With chaos injected: the run ended with a status its case expects.",
    )


class EvalRequest(BaseModel):
    """The EvalSuite workflow's input: the cases (plans already read from their files)."""

    cases: list[EvalCase] = Field(min_length=1)
    repeat: int = Field(default=1, ge=1, le=MAX_REPEAT)
    concurrency: int = Field(default=DEFAULT_EVAL_CONCURRENCY, ge=1, le=MAX_EVAL_CONCURRENCY)
    provider: str | None = Field(default=None, description="Every case's provider (--provider).")
    chaos: ChaosSettings | None = Field(
        default=None, description="Model mistakes injected into every case's run (--chaos)."
    )
    search_attributes: bool = Field(
        default=False, description="Start the case runs with the Harness* search attributes."
    )
    case_timeout_seconds: float = Field(
        default=DEFAULT_CASE_TIMEOUT_SECONDS,
        gt=0,
        le=24 * 3600,
        description="A case's run still going after this long is cancelled, and the case fails.",
    )
    history_events_before_new_run: int = Field(
        default=10_000,
        ge=20,
        le=40_000,
        description="Past this many events the suite starts no new case and, once the cases "
        "under way finish, continues as new with what it finished.",
    )
    finished: list[CaseResult] = Field(
        default_factory=list,
        description="Cases finished before the suite continued as new (it carries them on).",
    )
    started_at: datetime | None = Field(
        default=None, description="When the suite began, carried over a continue-as-new."
    )


class CaseRunRequest(BaseModel):
    """The eval activity's input: drive one case's run to its end and score it."""

    case: EvalCase
    run_id: str
    repeat: int = Field(ge=1)
    timeout_seconds: float = Field(default=DEFAULT_CASE_TIMEOUT_SECONDS, gt=0)


class EvalProgress(BaseModel):
    """What the `progress` query of an eval answers: the cases finished after the follower's
    last read, and how many have finished in all."""

    total: int
    done: int = 0
    finished: list[CaseResult]


class PassSummary(BaseModel):
    """One scenario's figures (or the whole eval's, under the name `all`)."""

    scenario: str
    cases: int
    runs: int
    passed_runs: int
    pass_rate: float = Field(description="Passed runs over runs.")
    pass_at_k: float = Field(description="Cases with at least one of their K runs passed.")
    pass_all_k: float = Field(description="pass^k: cases with all K runs passed.")
    p50_seconds: float
    p95_seconds: float
    tokens: int
    cost_usd: float
    endings: dict[str, int] = Field(
        default_factory=dict,
        description="Runs per ending: the terminal phase, or NOT_ENDED for a run that never "
        "ended. A provider that failed (FAILED_PROVIDER) stands apart from a plan that did.",
    )


NOT_ENDED = "NOT_ENDED"


class EvalReport(BaseModel):
    eval_id: str
    repeat: int
    provider: str | None = None
    started_at: datetime
    finished_at: datetime
    results: list[CaseResult]
    scenarios: list[PassSummary]
    overall: PassSummary
    chaos: ChaosTable | None = Field(
        default=None, description="How runs recovered from the mistakes --chaos injected."
    )

    def case_passed(self) -> dict[str, bool]:
        """Each case's verdict across its repeats: passed only if every run passed."""
        verdicts: dict[str, bool] = {}
        for result in self.results:
            verdicts[result.case] = verdicts.get(result.case, True) and result.passed
        return verdicts


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear between the closest ranks; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarise(name: str, results: Sequence[CaseResult]) -> PassSummary:
    by_case: dict[str, list[bool]] = {}
    for result in results:
        by_case.setdefault(result.case, []).append(result.passed)
    cases = len(by_case) or 1
    latencies = [result.latency_seconds for result in results if result.status is not None]
    return PassSummary(
        scenario=name,
        cases=len(by_case),
        runs=len(results),
        passed_runs=sum(result.passed for result in results),
        pass_rate=sum(result.passed for result in results) / (len(results) or 1),
        pass_at_k=sum(any(runs) for runs in by_case.values()) / cases,
        pass_all_k=sum(all(runs) for runs in by_case.values()) / cases,
        p50_seconds=percentile(latencies, 50),
        p95_seconds=percentile(latencies, 95),
        tokens=sum(result.tokens for result in results),
        cost_usd=sum(result.cost_usd for result in results),
        endings=dict(
            sorted(Counter(r.status.value if r.status else NOT_ENDED for r in results).items())
        ),
    )


def build_report(
    eval_id: str,
    request: EvalRequest,
    results: Sequence[CaseResult],
    started_at: datetime,
    finished_at: datetime,
) -> EvalReport:
    ordered = sorted(results, key=lambda result: (result.case, result.repeat))
    scenarios = sorted({result.scenario for result in ordered})
    return EvalReport(
        eval_id=eval_id,
        repeat=request.repeat,
        provider=request.provider,
        started_at=started_at,
        finished_at=finished_at,
        results=ordered,
        scenarios=[
            summarise(name, [r for r in ordered if r.scenario == name]) for name in scenarios
        ],
        overall=summarise("all", ordered),
        chaos=chaos_table(ordered, request.chaos) if request.chaos is not None else None,
    )


class Baseline(BaseModel):
    """Which cases passed in a run of the suite kept for comparison (`--save-baseline`)."""

    eval_id: str
    provider: str | None = None
    made_at: datetime
    cases: dict[str, bool]
    chaos: ChaosSettings | None = Field(default=None, description="The eval's --chaos.")
    recovery: dict[str, float] = Field(
        default_factory=dict, description="With --chaos: each kind's recovery (0 to 1)."
    )

    @classmethod
    def of(cls, report: EvalReport) -> Baseline:
        return cls(
            eval_id=report.eval_id,
            provider=report.provider,
            made_at=report.finished_at,
            cases=dict(sorted(report.case_passed().items())),
            chaos=report.chaos.settings if report.chaos else None,
            recovery=recovery_rates(report.chaos) if report.chaos else {},
        )


def regressions(report: EvalReport, baseline: Baseline) -> list[str]:
    """The cases that passed in the baseline and fail now (cases it lacks are new, not
    regressions)."""
    now = report.case_passed()
    return sorted(case for case, passed in now.items() if not passed and baseline.cases.get(case))
