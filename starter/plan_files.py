"""Reading plan files: exactly the JSON found in the `plan` field of `harness run --json`."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from harness.plan import Plan
from harness.problems import describe_invalid
from scenarios import UnknownScenarioError, get_scenario
from scenarios.base import Scenario
from starter.errors import CliError


def load_plan(path: str) -> Plan:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise CliError(f"cannot read plan file '{path}': {error.strerror or error}") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CliError(
            f"plan file '{path}' is not valid JSON: {error.msg} "
            f"(line {error.lineno}, column {error.colno})"
        ) from error
    if isinstance(data, dict) and "plan" in data and "nodes" not in data:
        data = data["plan"]
    try:
        return Plan.model_validate(data)
    except ValidationError as error:
        problems = describe_invalid(error, whole="plan")
        raise CliError(f"plan file '{path}' does not have the plan shape: {problems}") from error


def load_scenario(name: str) -> Scenario:
    try:
        return get_scenario(name)
    except UnknownScenarioError as error:
        raise CliError(str(error)) from error
