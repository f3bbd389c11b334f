"""Scenario packs. To add one: write a package with its tools, data, check and offline planning
rules, expose a `SCENARIO`, and register it in `_REGISTRY` below."""

from __future__ import annotations

import dataclasses
import difflib

from scenarios import cities, games, incidents, refunds, repo, synthetic
from scenarios.base import AcceptanceCheck, Scenario
from scenarios.management import MANAGEMENT_TOOLS

_REGISTRY: dict[str, Scenario] = {
    scenario.name: dataclasses.replace(scenario, shared_tools=MANAGEMENT_TOOLS)
    for scenario in (
        cities.SCENARIO,
        games.SCENARIO,
        incidents.SCENARIO,
        refunds.SCENARIO,
        repo.SCENARIO,
        synthetic.SCENARIO,
    )
}


class UnknownScenarioError(LookupError):
    pass


def all_scenarios() -> list[Scenario]:
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def scenario_names() -> list[str]:
    return sorted(_REGISTRY)


def get_scenario(name: str) -> Scenario:
    scenario = _REGISTRY.get(name)
    if scenario is not None:
        return scenario
    message = f"unknown scenario '{name}'"
    close = difflib.get_close_matches(name, _REGISTRY, n=1)
    message += f"; did you mean '{close[0]}'?" if close else ""
    raise UnknownScenarioError(f"{message} (available: {', '.join(scenario_names())})")


def acceptance_checks() -> dict[str, AcceptanceCheck]:
    """Every scenario's completion gates, by id (an id two scenarios register is an error)."""
    found: dict[str, AcceptanceCheck] = {}
    for scenario in all_scenarios():
        for check in scenario.acceptance_checks:
            if check.id in found:
                raise ValueError(f"acceptance check '{check.id}' is registered twice")
            found[check.id] = check
    return found
