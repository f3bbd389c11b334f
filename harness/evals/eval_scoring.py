"""Scoring one eval case: what its run showed (`CaseObservation`, read off the RunResult) held
against what the case expects, each unmet expectation said in words."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, JsonValue

from harness.engine.bounds import shown
from harness.engine.run import RunPhase, RunResult
from harness.engine.trace import TraceKind
from harness.evals.chaos import marked_kinds
from harness.evals.eval_case import CaseExpectations
from harness.waits.wait_book import WaitKind


class CaseObservation(BaseModel):
    """The few facts of a finished run an eval case is judged on."""

    status: RunPhase
    report: str | None = None
    error: str | None = None
    attempts: int = 0
    replans: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    wall_seconds: float = 0.0
    validation_codes: list[str] = Field(default_factory=list)
    error_codes: list[str] = Field(default_factory=list)
    retried_tools: list[str] = Field(default_factory=list)
    wait_kinds: list[WaitKind] = Field(default_factory=list)
    judge_score: float | None = None
    scenario_problems: list[str] = Field(
        default_factory=list, description="What the scenario's outcome check found."
    )
    driver_problems: list[str] = Field(
        default_factory=list, description="Waits the case had no scripted response for."
    )
    chaos: list[str] = Field(
        default_factory=list, description="The mistakes --chaos injected, as the run recorded."
    )


_FAILURES = (TraceKind.NODE_FAIL, TraceKind.AGENT_CALL)
"""Events whose `error_code` is a failure the run saw: a node's, or a call an agent made."""


def _attempts(data: dict[str, JsonValue]) -> int:
    attempts = data.get("attempts")
    return attempts if isinstance(attempts, int) else 0


def observe(
    result: RunResult, scenario_problems: list[str], driver_problems: list[str]
) -> CaseObservation:
    validation = {
        issue.code.value for record in result.attempt_history for issue in record.validation_issues
    }
    errors = {failure.code for record in result.attempt_history for failure in record.failure}
    errors |= {node.error_code for node in result.nodes if node.error_code}
    errors |= {
        str(event.data["error_code"])
        for event in result.trace
        if event.kind in _FAILURES and "error_code" in event.data
    }
    retried = {
        event.tool for event in result.trace if event.kind is TraceKind.NODE_RETRY and event.tool
    }
    retried |= {  # an agent's call, retried inside its loop
        event.tool
        for event in result.trace
        if event.kind is TraceKind.AGENT_CALL and event.tool and _attempts(event.data) > 1
    }
    return CaseObservation(
        status=result.status,
        report=result.report,
        error=result.error,
        attempts=result.attempts,
        replans=result.counts.replans,
        tool_calls=result.counts.tool_calls,
        tokens=result.usage.total_tokens,
        cost_usd=result.usage.cost_usd,
        wall_seconds=result.wall_seconds,
        validation_codes=sorted(validation),
        error_codes=sorted(errors),
        retried_tools=sorted(retried),
        wait_kinds=sorted({wait.kind for wait in result.waits}),
        judge_score=result.verdict.score if result.verdict else None,
        scenario_problems=scenario_problems,
        driver_problems=driver_problems,
        chaos=injected(result),
    )


def injected(result: RunResult) -> list[str]:
    """The chaos marks of each plan attempt: in the plan's `planned_by` when a plan came, in
    the planning failure's message when none did (each attempt records its marks once)."""
    kinds = []
    for record in result.attempt_history:
        kinds += marked_kinds(record.planned_by)
        for failure in record.failure:
            kinds += marked_kinds(failure.message)
    return [kind.value for kind in kinds]


def unmet(expect: CaseExpectations, seen: CaseObservation) -> list[str]:
    """Every expectation the run did not meet, in words; empty when the case passes."""
    problems = list(seen.driver_problems)
    statuses = expect.statuses()
    if seen.status not in statuses:
        wanted = " or ".join(status.value for status in statuses)
        why = f" ({seen.error})" if seen.error else ""
        problems.append(f"status is {seen.status.value}{why}, expected {wanted}")
    problems += _report_problems(expect, seen.report)
    problems += _bound_problems(expect, seen)
    problems += _missing("validation code", expect.validation_codes, seen.validation_codes)
    problems += _missing("error code", expect.error_codes, seen.error_codes)
    problems += _missing("retried tool", expect.retried_tools, seen.retried_tools)
    problems += _missing("wait of kind", expect.waits, seen.wait_kinds)
    if expect.scenario_check:
        problems += [f"scenario check: {problem}" for problem in seen.scenario_problems]
    if expect.min_judge_score is not None:
        if seen.judge_score is None:
            problems.append(f"no judge score, expected at least {expect.min_judge_score:g}")
        elif seen.judge_score < expect.min_judge_score:
            problems.append(f"judge score {seen.judge_score:g} is below {expect.min_judge_score:g}")
    return problems


def _report_problems(expect: CaseExpectations, report: str | None) -> list[str]:
    text = (report or "").casefold()
    problems = [
        f"the report does not mention '{term}'"
        for term in expect.mentions
        if term.casefold() not in text
    ]
    problems += [
        f"the report mentions '{term}', which it must not"
        for term in expect.not_mentions
        if term.casefold() in text
    ]
    return problems


def _bound_problems(expect: CaseExpectations, seen: CaseObservation) -> list[str]:
    bounds: list[tuple[str, float, float | None, float | None]] = [
        ("replans", seen.replans, expect.min_replans, expect.max_replans),
        ("tool calls", seen.tool_calls, None, expect.max_tool_calls),
        ("tokens", seen.tokens, None, expect.max_tokens),
        ("cost USD", seen.cost_usd, None, expect.max_cost_usd),
    ]
    problems = []
    for name, value, low, high in bounds:
        if low is not None and value < low:
            problems.append(f"{name} {_number(value)}, expected at least {_number(low)}")
        if high is not None and value > high:
            problems.append(f"{name} {_number(value)}, expected at most {_number(high)}")
    return problems


def _number(value: float) -> str:
    """12,345 for a count, 0.0123 for money. An int is never made a float: past float's range
    (a case's `min_replans: 1` and 400 zeros) that raised OverflowError."""
    if isinstance(value, int):
        return f"{value:,}" if value.bit_length() <= 64 else shown(value)
    return f"{value:,.0f}" if value.is_integer() else f"{value:g}"


def _missing(what: str, wanted: Sequence[str], seen: Sequence[str]) -> list[str]:
    present = set(seen)
    shown = ", ".join(seen) or "none"
    return [f"no {what} {code} (seen: {shown})" for code in wanted if code not in present]
