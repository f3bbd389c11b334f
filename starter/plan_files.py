"""Reading plan files (exactly the JSON found in the `plan` field of `harness run --json`), and
finding the pack a command names."""

from __future__ import annotations

import difflib

from pydantic import ValidationError

from durable_harness._client.input_files import read_json, read_text_file
from durable_harness.exceptions import InvalidInput
from durable_harness.pack import PACK_NAME
from harness.core.plan import Plan
from harness.core.problems import describe_invalid
from scenarios import UnknownScenarioError, get_scenario
from scenarios.base import Pack
from scenarios.registry import registry
from starter.output import note


def load_plan(path: str) -> Plan:
    text = read_text_file(path, f"plan file '{path}'")
    data = read_json(text, f"plan file '{path}'")
    if isinstance(data, dict) and "plan" in data and "nodes" not in data:
        data = data["plan"]
    try:
        return Plan.model_validate(data)
    except ValidationError as error:
        problems = describe_invalid(error, whole="plan")
        raise InvalidInput(
            f"plan file '{path}' does not have the plan shape: {problems}"
        ) from error


def load_scenario(name: str) -> Pack:
    try:
        return get_scenario(name)
    except UnknownScenarioError as error:
        raise InvalidInput(str(error)) from error


def pack_here(name: str) -> Pack | None:
    """The pack of that name if this process has it, else None: the run goes on to the worker,
    which may have packs this process lacks (another host, another HARNESS_PACKS), and whose
    catalog activity fails the run (UNKNOWN_SCENARIO, naming the worker's packs) when it has no
    such pack either. A name close to a pack here gets a did-you-mean on stderr; a name that no
    pack can have is refused (InvalidInput)."""
    packs = registry()
    if name in packs.names():
        return packs.get(name)
    near = difflib.get_close_matches(name.lower(), packs.names(), n=1)
    if PACK_NAME.fullmatch(name) is None:
        hint = f"; did you mean '{near[0]}'?" if near else ""
        raise InvalidInput(
            f"'{name}' is not a pack name (a lowercase letter, then lowercase letters, digits, "
            f"- or _, at most 64){hint}"
        )
    if near:
        note(
            f"harness: no pack '{name}' here (did you mean '{near[0]}'?); the worker decides, "
            "and fails the run if it has none either"
        )
    return None
