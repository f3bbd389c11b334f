"""The five independent sources of evidence, and the pure steps that turn raw telemetry into them.

Each evidence model carries its `source`, so the report check can find it among a run's results
whatever the plan called its nodes, and whether a node returned it or an agent node's tool call
did (an agent's result keeps each call's result).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, JsonValue, ValidationError

from harness.engine.agent_node import AgentResult
from scenarios.incidents.data import (
    CPU,
    ERROR_RATE,
    P99,
    SERVICES,
    ConfigChange,
    Deployment,
    LogLine,
    Trace,
    minute_of,
)


class Source(StrEnum):
    METRICS = "metrics"
    LOGS = "logs"
    TRACES = "traces"
    DEPLOYMENTS = "deployments"
    CONFIG = "config"


# The tools that investigate each source, as a planner adds them and a problem names them.
INVESTIGATION: dict[Source, str] = {
    Source.METRICS: "get_metrics -> compare_periods",
    Source.LOGS: "get_logs -> detect_signatures",
    Source.TRACES: "get_traces -> find_slow_spans",
    Source.DEPLOYMENTS: "get_deployments",
    Source.CONFIG: "get_config_changes",
}


def source_tools(source: Source) -> list[str]:
    """The tools that investigate `source`, the raw read first."""
    return INVESTIGATION[source].split(" -> ")


def branch_tool(source: Source) -> str:
    """The one tool that gives `source`'s evidence by itself (an analysis step reads its own
    telemetry when not given it): what an agent investigating `source` calls."""
    return source_tools(source)[-1]


# A shift is a rise to at least twice the baseline, and by at least this much.
_MIN_RISE = {ERROR_RATE: 1.0, P99: 100.0, CPU: 20.0}
_SLOW_SPAN_MIN_MS = 100


class Shift(BaseModel):
    service: str
    metric: str
    baseline: float
    after_mean: float
    peak: float
    onset: str


class MetricComparison(BaseModel):
    source: Literal["metrics"] = "metrics"
    split_at: str
    services: list[str]
    shifts: list[Shift]


class Signature(BaseModel):
    service: str
    level: str
    template: str
    before: int
    after: int
    first_seen: str
    implicates: str
    notable: bool


class SignatureReport(BaseModel):
    source: Literal["logs"] = "logs"
    split_at: str
    lines: int
    signatures: list[Signature]


class SpanStat(BaseModel):
    service: str
    operation: str
    before_ms: float | None
    after_ms: float | None
    slow: bool


class SpanReport(BaseModel):
    source: Literal["traces"] = "traces"
    split_at: str
    traces: int
    spans: list[SpanStat]


class DeploymentList(BaseModel):
    source: Literal["deployments"] = "deployments"
    deployments: list[Deployment]


class ConfigChangeList(BaseModel):
    source: Literal["config"] = "config"
    changes: list[ConfigChange]


class Evidence(BaseModel):
    """Whatever the investigation gathered; a source left None was not investigated."""

    metrics: MetricComparison | None = None
    logs: SignatureReport | None = None
    traces: SpanReport | None = None
    deployments: DeploymentList | None = None
    config: ConfigChangeList | None = None

    def investigated(self) -> list[Source]:
        return [source for source in Source if getattr(self, source.value) is not None]


_MODELS: dict[str, type[BaseModel]] = {
    "metrics": MetricComparison,
    "logs": SignatureReport,
    "traces": SpanReport,
    "deployments": DeploymentList,
    "config": ConfigChangeList,
}


def evidence_in(results: Mapping[str, JsonValue]) -> Evidence:
    """The evidence among a run's node results, found by each result's `source`."""
    return evidence_among(results.values())


def evidence_among(values: Iterable[JsonValue]) -> Evidence:
    """The evidence among `values` (node results: evidence, or agent results whose calls
    returned it), found by `source`; of two for one source, the later one."""
    found: dict[str, BaseModel] = {}
    for value in (piece for outer in values for piece in _pieces(outer)):
        source = value.get("source") if isinstance(value, dict) else None
        if not isinstance(source, str) or source not in _MODELS:
            continue
        try:
            found[source] = _MODELS[source].model_validate(value)
        except ValidationError:
            continue
    return Evidence.model_validate({name: model.model_dump() for name, model in found.items()})


def _pieces(value: JsonValue) -> list[JsonValue]:
    """An agent result's ok calls' results, in the order made; any other value, itself."""
    if not isinstance(value, dict) or "tool_calls" not in value:
        return [value]
    try:
        agent = AgentResult.model_validate(value)
    except ValidationError:
        return [value]
    return [call.result for call in agent.tool_calls if call.ok]


def compare_series(
    service: str, metric: str, points: list[tuple[str, float]], split: int
) -> Shift | None:
    """A rise of `metric` after `split` against the median before it, or None."""
    before = [value for time, value in points if minute_of(time) < split]
    after = [value for time, value in points if minute_of(time) >= split]
    if not before or not after or metric not in _MIN_RISE:
        return None
    baseline = statistics.median(before)

    def risen(value: float) -> bool:
        return value >= 2 * baseline and value - baseline >= _MIN_RISE[metric]

    if not any(risen(value) for value in after):
        return None
    onset = next(time for time, value in points if risen(value))
    return Shift(
        service=service,
        metric=metric,
        baseline=baseline,
        after_mean=round(statistics.fmean(after), 1),
        peak=max(after),
        onset=onset,
    )


_VARIABLE = re.compile(r"\bord-\d+\b|\b\d+(?:\.\d+)?\b")


def signature_of(message: str) -> str:
    return _VARIABLE.sub("<n>", message)


def detect(lines: list[LogLine], split: int) -> list[Signature]:
    """WARN and ERROR lines grouped by template; a notable one is an ERROR that is new or tripled
    (per minute) after `split`."""
    groups: dict[tuple[str, str, str], list[LogLine]] = {}
    for line in lines:
        if line.level in ("WARN", "ERROR"):
            key = (line.service, line.level, signature_of(line.message))
            groups.setdefault(key, []).append(line)
    times = [minute_of(line.time) for line in lines] or [split]
    before_minutes = max(split - min(times), 1)
    after_minutes = max(max(times) + 1 - split, 1)
    signatures = []
    for (service, level, template), group in groups.items():
        before = sum(1 for line in group if minute_of(line.time) < split)
        after = len(group) - before
        rose = after / after_minutes >= 3 * before / before_minutes
        signatures.append(
            Signature(
                service=service,
                level=level,
                template=template,
                before=before,
                after=after,
                first_seen=group[0].time,
                implicates=_named_service(template, service),
                notable=level == "ERROR" and after > 0 and (before == 0 or rose),
            )
        )
    return sorted(signatures, key=lambda s: (-s.after, s.service, s.template))


def _named_service(template: str, emitter: str) -> str:
    """The other service a message names (the one it failed to call), else its emitter."""
    named = [s for s in SERVICES if s != emitter and re.search(rf"\b{re.escape(s)}\b", template)]
    return named[0] if named else emitter


def span_stats(traces: list[Trace], split: int) -> list[SpanStat]:
    """Mean self time (own duration minus its children's) per service and operation, before and
    after `split`; slow when it at least doubled and grew by 100 ms or more."""
    samples: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
    for trace in traces:
        period = int(minute_of(trace.time) >= split)
        for span in trace.spans:
            children = sum(s.duration_ms for s in trace.spans if s.parent_id == span.span_id)
            lists = samples.setdefault((span.service, span.operation), ([], []))
            lists[period].append(span.duration_ms - children)
    stats = []
    for (service, operation), (before, after) in samples.items():
        before_ms = round(statistics.fmean(before), 1) if before else None
        after_ms = round(statistics.fmean(after), 1) if after else None
        slow = (
            before_ms is not None
            and after_ms is not None
            and after_ms >= 2 * before_ms
            and after_ms - before_ms >= _SLOW_SPAN_MIN_MS
        )
        stats.append(
            SpanStat(
                service=service,
                operation=operation,
                before_ms=before_ms,
                after_ms=after_ms,
                slow=slow,
            )
        )
    return sorted(stats, key=lambda s: (not s.slow, -((s.after_ms or 0) - (s.before_ms or 0))))
