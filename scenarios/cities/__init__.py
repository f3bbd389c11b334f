"""Scenario `cities`: compare cities on population, timezone and a short narrative."""

from pathlib import Path

from scenarios.base import Pack
from scenarios.cities.check import check_cities_report, cities_rubric
from scenarios.cities.data import CITIES
from scenarios.cities.planning import plan_cities
from scenarios.cities.tools import TOOLS

SCENARIO = Pack(
    name="cities",
    eval_cases=Path(__file__).parent / "eval_cases.yaml",
    description="Compare cities on population, timezone and a short narrative.",
    example_goal="Compare Paris, Tokyo and New York",
    tools=TOOLS,
    check=check_cities_report,
    offline_plan=plan_cities,
    rubric=cities_rubric,
    facts=tuple(f"{city.name}, {city.country}: {city.known_for}" for city in CITIES),
)
