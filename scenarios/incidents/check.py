"""The incidents report check: the report names a cause the evidence supports, cites at least two
independent sources, and is confident enough; otherwise it says which investigation is missing.

The check recomputes the assessment from the run's own evidence, so a report cannot claim a
source it did not investigate or a confidence the evidence does not give.
"""

from __future__ import annotations

import re

from scenarios.base import CheckInput, Rubric
from scenarios.incidents.assessment import (
    EFFECT_SOURCES,
    MIN_CONFIDENCE,
    Assessment,
    assess,
)
from scenarios.incidents.data import SERVICES
from scenarios.incidents.evidence import INVESTIGATION, evidence_in
from scenarios.incidents.planning import parse_symptom
from scenarios.incidents.report import CAUSE, CONFIDENCE, EVIDENCE

MIN_SOURCES = 2
_CITED = re.compile(r"^\s*-\s*\[(?P<source>[a-z]+)\]", re.MULTILINE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def check_incident_report(check: CheckInput) -> list[str]:
    symptom = parse_symptom(check.goal)
    if symptom is None:
        return ["the goal names no service with telemetry, so no report can answer it"]
    assessment = assess(evidence_in(check.results), symptom.service, symptom.since)
    named = named_cause(check.report)
    if named is None:
        problems = [f"the report names no root cause ('{CAUSE} <service> ...')"]
    else:
        problems = _citation_problems(check.report, assessment)
        problems += _support_problems(named, assessment)
    return problems + _confidence_problems(check.report, assessment)


def incidents_rubric(check: CheckInput) -> Rubric:
    """The critic looks for the cause, the change that triggered it, and the confidence."""
    symptom = parse_symptom(check.goal)
    terms: list[str] = []
    if symptom is not None:
        assessment = assess(evidence_in(check.results), symptom.service, symptom.since)
        terms = [assessment.cause] if assessment.cause else []
        terms += [f.subject for f in assessment.evidence if f.subject]
        terms.append(f"{assessment.confidence:.2f}")
    return Rubric(
        criteria=[
            "names the most likely root cause and the change that triggered it",
            "cites evidence from at least two independent sources",
            "states a confidence that the evidence supports, and what was not investigated",
        ],
        evidence_terms=terms,
    )


def missing_investigation(assessment: Assessment) -> str:
    if not assessment.missing:
        return "every source was investigated and the evidence still does not single out a cause"
    wanted = ", ".join(f"{source} ({INVESTIGATION[source]})" for source in assessment.missing)
    return f"investigate {wanted}"


def _line_after(report: str, label: str) -> str | None:
    for line in report.splitlines():
        if line.strip().startswith(label):
            return line.strip().removeprefix(label)
    return None


def named_cause(report: str) -> str | None:
    line = _line_after(report, CAUSE)
    if line is None:
        return None
    mentioned = [(line.find(s), s) for s in SERVICES if re.search(rf"\b{re.escape(s)}\b", line)]
    return min(mentioned)[1] if mentioned else None


def _cited_sources(report: str) -> list[str]:
    if EVIDENCE not in report:
        return []
    section = re.split(r"^## ", report.split(EVIDENCE, 1)[1], maxsplit=1, flags=re.MULTILINE)[0]
    return list(dict.fromkeys(match.group("source") for match in _CITED.finditer(section)))


def _citation_problems(report: str, assessment: Assessment) -> list[str]:
    cited = _cited_sources(report)
    problems = [
        f"the report cites [{source}] evidence, but no {source} were investigated"
        for source in cited
        if source not in assessment.investigated
    ]
    if len(cited) < MIN_SOURCES:
        shown = ", ".join(cited) or "none"
        problems.append(
            f"the report cites evidence from {len(cited)} source(s) ({shown}); a root cause needs "
            f"at least {MIN_SOURCES} independent sources: {missing_investigation(assessment)}"
        )
    return problems


def _support_problems(named: str, assessment: Assessment) -> list[str]:
    candidate = assessment.candidate(named)
    sources = candidate.sources if candidate else []
    effects = [source for source in sources if source in EFFECT_SOURCES]
    if len(sources) >= MIN_SOURCES and effects:
        return []
    shown = ", ".join(sources) or "none"
    message = (
        f"the report names {named} as the cause, but the evidence supports it from "
        f"{len(sources)} source(s) ({shown}); a cause needs at least {MIN_SOURCES}, one of them "
        f"showing {named} degraded ({', '.join(EFFECT_SOURCES)})"
    )
    if assessment.cause and assessment.cause != named:
        message += f"; the evidence points at {assessment.cause}"
    return [message]


def _confidence_problems(report: str, assessment: Assessment) -> list[str]:
    problems = []
    line = _line_after(report, CONFIDENCE)
    stated = _NUMBER.search(line) if line is not None else None
    if stated is None:
        problems.append(f"the report states no confidence ('{CONFIDENCE} 0.80 (high)')")
    elif abs(float(stated.group()) - assessment.confidence) > 0.01:
        problems.append(
            f"the report states confidence {stated.group()}, but the evidence gives "
            f"{assessment.confidence:.2f}"
        )
    if assessment.confidence < MIN_CONFIDENCE:
        problems.append(
            f"confidence {assessment.confidence:.2f} ({assessment.level}) is below "
            f"{MIN_CONFIDENCE:.2f}: {missing_investigation(assessment)}"
        )
    return problems
