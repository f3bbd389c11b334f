"""The cities report check: every requested city that exists appears in the report."""

from __future__ import annotations

from scenarios.base import CheckInput
from scenarios.cities.data import find_city
from scenarios.cities.planning import requested_cities


def check_cities_report(check: CheckInput) -> list[str]:
    known = [record.name for name in requested_cities(check.goal) if (record := find_city(name))]
    if not known:
        return ["none of the cities named in the goal is in the data"]
    report = check.report.lower()
    return [f"the report does not mention {name}" for name in known if name.lower() not in report]
