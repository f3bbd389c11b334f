"""Deterministic scoring: which service most likely caused the symptom, and how sure we are.

Candidates are the symptom's service and every service it depends on (a cause flows up the call
chain). Each of the five sources that implicates a candidate adds 0.2 to its score. A candidate is
plausible only if at least one source shows it degraded (metrics, logs or traces): a deployment or
a config change alone is a suspect, not a cause. The confidence is the best plausible candidate's
score minus half the score of the next plausible one.
"""

from __future__ import annotations

from pydantic import BaseModel

from scenarios.incidents.data import CPU, ERROR_RATE, P99, clock, dependencies_of, minute_of
from scenarios.incidents.evidence import Evidence, Shift, Source

WEIGHT = 0.2
MIN_CONFIDENCE = 0.6
EFFECT_SOURCES = (Source.METRICS, Source.LOGS, Source.TRACES)
ONSET_TOLERANCE_MINUTES = 15
CHANGE_LOOKBACK_MINUTES = 60
_UNITS = {ERROR_RATE: "%", P99: " ms", CPU: "%"}


class Finding(BaseModel):
    source: Source
    service: str
    text: str
    effect: bool
    change: str | None = None  # a deployment or config change, in a few words
    subject: str | None = None  # the version deployed or the config key changed


class Candidate(BaseModel):
    service: str
    score: float
    sources: list[Source]
    plausible: bool
    findings: list[str]


class Assessment(BaseModel):
    service: str
    onset: str
    symptom: list[str]
    cause: str | None
    trigger: str | None = None
    confidence: float
    level: str
    evidence: list[Finding]
    candidates: list[Candidate]
    other_signals: list[str]
    investigated: list[Source]
    missing: list[Source]

    def candidate(self, service: str) -> Candidate | None:
        return next((c for c in self.candidates if c.service == service), None)


def confidence_level(confidence: float) -> str:
    if confidence >= 0.75:
        return "high"
    return "medium" if confidence >= MIN_CONFIDENCE else "low"


def assess(evidence: Evidence, service: str, since: str | None) -> Assessment:
    symptom = _symptom_shifts(evidence, service)
    onset = min((minute_of(s.onset) for s in symptom), default=None)
    onset = onset if onset is not None else minute_of(since or _split(evidence))
    suspects = dependencies_of(service)
    findings = _findings(evidence, service, onset)
    candidates = _rank([f for f in findings if f.service in suspects], suspects)
    plausible = [c for c in candidates if c.plausible]
    top = plausible[0] if plausible else None
    runner_up = plausible[1].score if len(plausible) > 1 else 0.0
    confidence = round(max(top.score - runner_up / 2, 0.0), 2) if top else 0.0
    investigated = evidence.investigated()
    cause = [f for f in findings if top and f.service == top.service]
    config = [f.change for f in cause if f.source is Source.CONFIG and f.change]
    deploys = [f.change for f in cause if f.source is Source.DEPLOYMENTS and f.change]
    return Assessment(
        service=service,
        onset=clock(onset),
        symptom=[_describe_shift(s) for s in symptom],
        cause=top.service if top else None,
        trigger="; ".join(config or deploys) or None,
        confidence=confidence,
        level=confidence_level(confidence),
        evidence=cause,
        candidates=candidates,
        other_signals=[f.text for f in findings if f.service not in suspects],
        investigated=investigated,
        missing=[source for source in Source if source not in investigated],
    )


def _split(evidence: Evidence) -> str:
    for report in (evidence.metrics, evidence.logs, evidence.traces):
        if report is not None:
            return report.split_at
    return "14:00"


def _symptom_shifts(evidence: Evidence, service: str) -> list[Shift]:
    shifts = evidence.metrics.shifts if evidence.metrics else []
    return [s for s in shifts if s.service == service and s.metric in (ERROR_RATE, P99)]


def _describe_shift(shift: Shift) -> str:
    unit = _UNITS.get(shift.metric, "")
    before, peak = (_round(value) for value in (shift.baseline, shift.peak))
    return (
        f"{shift.service} {shift.metric} {before:g}{unit} -> {peak:g}{unit} "
        f"from {shift.onset} ({shift.peak / shift.baseline:.0f}x)"
    )


def _round(value: float) -> float:
    return float(round(value)) if value >= 100 else round(value, 1)


def _findings(evidence: Evidence, service: str, onset: int) -> list[Finding]:
    return [
        *_metric_findings(evidence, service, onset),
        *_log_findings(evidence),
        *_trace_findings(evidence),
        *_change_findings(evidence, onset),
    ]


def _metric_findings(evidence: Evidence, service: str, onset: int) -> list[Finding]:
    """Rises that start with the symptom; the symptom's own error and latency rises excluded."""
    return [
        Finding(source=Source.METRICS, service=s.service, text=_describe_shift(s), effect=True)
        for s in (evidence.metrics.shifts if evidence.metrics else [])
        if abs(minute_of(s.onset) - onset) <= ONSET_TOLERANCE_MINUTES
        and not (s.service == service and s.metric in (ERROR_RATE, P99))
    ]


def _log_findings(evidence: Evidence) -> list[Finding]:
    return [
        Finding(
            source=Source.LOGS,
            service=sig.implicates,
            text=f"{sig.level} in {sig.service} from {sig.first_seen}, {sig.before} before and "
            f'{sig.after} after: "{sig.template}"',
            effect=True,
        )
        for sig in (evidence.logs.signatures if evidence.logs else [])
        if sig.notable
    ]


def _trace_findings(evidence: Evidence) -> list[Finding]:
    return [
        Finding(
            source=Source.TRACES,
            service=span.service,
            text=f"{span.service} {span.operation} self time {span.before_ms:g} ms -> "
            f"{span.after_ms:g} ms",
            effect=True,
        )
        for span in (evidence.traces.spans if evidence.traces else [])
        if span.slow
    ]


def _change_findings(evidence: Evidence, onset: int) -> list[Finding]:
    """Deployments and config changes from an hour before the onset to just after it."""
    findings = [
        Finding(
            source=Source.DEPLOYMENTS,
            service=d.service,
            text=f"{d.service} {d.version} (from {d.previous_version}) deployed at {d.time}: "
            f"{d.summary}",
            effect=False,
            change=f"deploy {d.version} at {d.time}",
            subject=d.version,
        )
        for d in (evidence.deployments.deployments if evidence.deployments else [])
        if _before_onset(d.time, onset)
    ]
    findings += [
        Finding(
            source=Source.CONFIG,
            service=c.service,
            text=f"{c.service} {c.key} {c.old} -> {c.new} at {c.time} ({c.change_id}, {c.via})",
            effect=False,
            change=f"{c.key} changed from {c.old} to {c.new} at {c.time} ({c.change_id}, {c.via})",
            subject=c.key,
        )
        for c in (evidence.config.changes if evidence.config else [])
        if _before_onset(c.time, onset)
    ]
    return findings


def _before_onset(time: str, onset: int) -> bool:
    return onset - CHANGE_LOOKBACK_MINUTES <= minute_of(time) <= onset + 5


def _rank(findings: list[Finding], suspects: list[str]) -> list[Candidate]:
    candidates = []
    for service in suspects:
        own = [f for f in findings if f.service == service]
        sources = [source for source in Source if any(f.source is source for f in own)]
        if sources:
            candidates.append(
                Candidate(
                    service=service,
                    score=round(WEIGHT * len(sources), 2),
                    sources=sources,
                    plausible=any(f.effect for f in own),
                    findings=[f.text for f in own],
                )
            )
    return sorted(candidates, key=lambda c: (not c.plausible, -c.score, suspects.index(c.service)))
