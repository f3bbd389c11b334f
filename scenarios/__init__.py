"""Scenario packs: the built-in packs, one package each (tools, data, check and offline planning
rules, exposed as `SCENARIO`, a `durable_harness.Pack`), and the functions that find the packs
of this process, built-in or installed (`scenarios.registry`).

To add a built-in pack: write its package and name it in `registry.BUILT_IN_PACKS` and in the
`durable_harness.packs` entry points of pyproject.toml."""

from __future__ import annotations

from durable_harness.pack import Pack
from durable_harness.pack_types import AcceptanceCheck
from scenarios.registry import UnknownScenarioError as UnknownScenarioError
from scenarios.registry import registry


def all_scenarios() -> list[Pack]:
    return registry().packs()


def scenario_names() -> list[str]:
    return registry().names()


def get_scenario(name: str) -> Pack:
    return registry().get(name)


def acceptance_checks() -> dict[str, AcceptanceCheck]:
    """Every pack's completion gates, by id (an id two packs register is an error)."""
    return registry().acceptance_checks()
