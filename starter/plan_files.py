"""Reading plan files: exactly the JSON found in the `plan` field of `harness run --json`."""

from __future__ import annotations

import json

from pydantic import JsonValue, ValidationError

from harness.core.plan import Plan
from harness.core.problems import describe_invalid
from scenarios import UnknownScenarioError, get_scenario
from scenarios.base import Scenario
from starter.errors import CliError
from starter.input_files import read_text_file


def load_plan(path: str) -> Plan:
    text = read_text_file(path, f"plan file '{path}'")
    data = read_json(text, f"plan file '{path}'")
    if isinstance(data, dict) and "plan" in data and "nodes" not in data:
        data = data["plan"]
    try:
        return Plan.model_validate(data)
    except ValidationError as error:
        problems = describe_invalid(error, whole="plan")
        raise CliError(f"plan file '{path}' does not have the plan shape: {problems}") from error


def read_json(text: str, what: str) -> JsonValue:
    """JSON text, or one line that says why not (bad syntax, NaN, nesting too deep)."""
    try:
        data: JsonValue = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise CliError(
            f"{what} is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from error
    except ValueError as error:
        raise CliError(f"{what} is not valid JSON: {error}") from error
    except RecursionError as error:
        raise CliError(f"{what} nests too deeply to read") from error
    return data


def _no_constant(name: str) -> JsonValue:
    raise ValueError(f"{name} is not a JSON number")


def load_scenario(name: str) -> Scenario:
    try:
        return get_scenario(name)
    except UnknownScenarioError as error:
        raise CliError(str(error)) from error
