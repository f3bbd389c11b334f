"""The cities report check: every requested city that exists appears in the report."""

from __future__ import annotations

from pydantic import JsonValue

from scenarios.base import CheckInput, Rubric
from scenarios.cities.data import find_city
from scenarios.cities.planning import requested_cities


def check_cities_report(check: CheckInput) -> list[str]:
    known = [record.name for name in requested_cities(check.goal) if (record := find_city(name))]
    if not known:
        return ["none of the cities named in the goal is in the data"]
    report = check.report.lower()
    return [f"the report does not mention {name}" for name in known if name.lower() not in report]


def cities_rubric(check: CheckInput) -> Rubric:
    """The critic's rubric; a faithful report repeats each city's figures as the tools gave them."""
    terms: list[str] = []
    for result in check.results.values():
        terms += _facts(result)
    return Rubric(
        criteria=[
            "compares every requested city on population and timezone",
            "uses the populations and timezones exactly as the tools returned them",
            "does not invent cities or figures",
        ],
        evidence_terms=terms,
    )


def _facts(result: JsonValue) -> list[str]:
    if not isinstance(result, dict):
        return []
    facts = [str(result["city"])] if "city" in result else []
    if isinstance(result.get("population"), int):
        facts.append(f"{result['population']:,}")
    if "timezone" in result:
        facts.append(str(result["timezone"]))
    return facts
