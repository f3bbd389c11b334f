"""Reading plan files: exactly the JSON found in the `plan` field of `harness run --json`."""

from __future__ import annotations

from pydantic import ValidationError

from durable_harness._client.input_files import read_json, read_text_file
from durable_harness.exceptions import InvalidInput
from harness.core.plan import Plan
from harness.core.problems import describe_invalid
from scenarios import UnknownScenarioError, get_scenario
from scenarios.base import Pack


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
