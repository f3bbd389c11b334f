"""The incident analysis as markdown, from the assessment alone (analyze_evidence's draft).

The layout is a contract with the report check: a '**Most likely root cause:**' line naming a
service, a '**Confidence:**' line with the number, and '## Evidence' items tagged by source.
"""

from __future__ import annotations

from scenarios.incidents.assessment import Assessment
from scenarios.incidents.evidence import INVESTIGATION, Source

CAUSE = "**Most likely root cause:**"
CONFIDENCE = "**Confidence:**"
EVIDENCE = "## Evidence"
NO_CAUSE = "none identified"


def render_report(assessment: Assessment, symptom: str, since: str | None) -> str:
    title = f"{assessment.service} {symptom}" + (f" since {since}" if since else "")
    lines = [f"# Incident analysis: {title}", ""]
    lines += _headline(assessment)
    lines += ["", "## Symptom", ""]
    lines += [f"- {shift}" for shift in assessment.symptom] or [_no_symptom(assessment)]
    lines += ["", EVIDENCE, ""]
    lines += [f"- [{f.source}] {f.text}" for f in assessment.evidence] or [
        "- nothing in the investigated sources points at a cause"
    ]
    lines += _other_candidates(assessment)
    if assessment.other_signals:
        lines += ["", f"## Other signals (outside {assessment.service}'s dependencies)", ""]
        lines += [f"- {signal}" for signal in assessment.other_signals]
    if assessment.missing:
        lines += ["", "## Not investigated", ""]
        lines += [f"- {source}: {INVESTIGATION[source]}" for source in assessment.missing]
    return "\n".join(lines)


def _headline(assessment: Assessment) -> list[str]:
    cause = assessment.cause
    if cause is None:
        named = NO_CAUSE
    elif assessment.trigger:
        named = f"{cause}: {assessment.trigger}"
    elif {Source.DEPLOYMENTS, Source.CONFIG} & set(assessment.missing):
        named = f"{cause} degraded; deployments and config changes were not investigated"
    else:
        named = f"{cause} degraded; no deployment or config change explains it"
    top = assessment.candidate(cause) if cause else None
    support = (
        f"{len(top.sources)} of 5 sources implicate {cause} ({', '.join(top.sources)})"
        if top
        else f"investigated: {', '.join(assessment.investigated)}"
    )
    return [
        f"{CAUSE} {named}",
        f"{CONFIDENCE} {assessment.confidence:.2f} ({assessment.level}); {support}.",
    ]


def _other_candidates(assessment: Assessment) -> list[str]:
    others = [c for c in assessment.candidates if c.service != assessment.cause]
    if not others:
        return []
    lines = ["", "## Other candidates", ""]
    for candidate in others:
        verdict = (
            "also degraded"
            if candidate.plausible
            else "a change with no sign of degradation (ruled out)"
        )
        lines.append(
            f"- {candidate.service} ({candidate.score:.2f}): {'; '.join(candidate.findings)} "
            f"— {verdict}"
        )
    return lines


def _no_symptom(assessment: Assessment) -> str:
    if Source.METRICS in assessment.missing:
        return f"- metrics were not compared; the onset is taken as {assessment.onset}"
    return f"- the metrics show no rise in {assessment.service}'s 5xx error rate or p99 latency"
