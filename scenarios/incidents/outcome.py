"""The eval's outcome check of an incident run: a report the run stands behind passes the
scenario's check again, and the root cause it names for a symptom on the checkout path is the
one the data planted (payments-service), never a decoy."""

from __future__ import annotations

from collections.abc import Mapping

from scenarios.base import CheckInput, OutcomeInput
from scenarios.incidents.check import check_incident_report, named_cause
from scenarios.incidents.data import PLANTED_CAUSE
from scenarios.incidents.planning import parse_symptom


async def incident_outcome(outcome: OutcomeInput, services: Mapping[str, object]) -> list[str]:
    if not outcome.succeeded:
        return []
    report = outcome.report or ""
    problems = check_incident_report(CheckInput(outcome.goal, report, outcome.results))
    symptom = parse_symptom(outcome.goal)
    planted = PLANTED_CAUSE.get(symptom.service) if symptom is not None else None
    named = named_cause(report)
    if planted is not None and named != planted:
        problems.append(f"the report names {named or 'no cause'}; the planted cause is {planted}")
    return problems
