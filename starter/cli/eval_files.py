"""Reading eval case files: the one a pack names (`Pack(eval_cases=...)`) or any file the
user names, YAML or JSON. A file that cannot be used is one line that names the file, the case
and the field, with the field it most likely meant; nothing is started."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

import scenarios
from durable_harness._client.input_files import MAX_CASE_FILE_BYTES, read_text_file
from durable_harness.exceptions import HarnessError
from harness.evals.eval_case import (
    CaseExpectations,
    CaseFile,
    CaseLimits,
    CaseOptions,
    EvalCase,
    ScriptedAnswer,
    ScriptedApproval,
)
from starter.errors import CliError
from starter.plan_files import load_plan, load_scenario, pack_here

_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)
"""libyaml's safe loader where PyYAML has it: twice as fast, and it refuses flow nesting past
1,000 levels where the pure-Python one recurses until Python stops it."""
_MODELS: tuple[type[BaseModel], ...] = (
    CaseFile,
    EvalCase,
    CaseOptions,
    CaseLimits,
    CaseExpectations,
    ScriptedAnswer,
    ScriptedApproval,
)
_FIELDS = sorted({name for model in _MODELS for name in model.model_fields})


def scenario_case_file(name: str) -> Path | None:
    """The case file the pack this process has under `name` names (`Pack(eval_cases=...)`), as
    the built-ins name theirs; none when it has none."""
    return scenarios.get_scenario(name).eval_cases


def scenarios_with_cases() -> list[str]:
    return [name for name in scenarios.scenario_names() if scenario_case_file(name) is not None]


def load_cases(targets: Sequence[str], only: Sequence[str] = ()) -> list[EvalCase]:
    """The cases of each target (a scenario name or a case file; none: every scenario that has
    cases), keeping those whose `scenario/id` matches one of `only` (shell patterns)."""
    cases: list[EvalCase] = []
    for path in [_file_of(target) for target in targets or scenarios_with_cases()]:
        cases += read_case_file(path).cases
    keys = [case.key for case in cases]
    doubled = sorted({key for key in keys if keys.count(key) > 1})
    if doubled:
        raise CliError(f"case {doubled[0]} is given twice; name each case file once")
    if only:
        cases = [c for c in cases if any(fnmatch.fnmatchcase(c.key, p) for p in only)]
        if not cases:
            raise CliError(f"no case matches {' or '.join(only)} (cases are named scenario/id)")
    return cases


def _file_of(target: str) -> Path:
    path = Path(target)
    if path.suffix.lower() in (".yaml", ".yml", ".json") or path.is_file():
        return path
    load_scenario(target)  # an unknown name says so, with the closest one
    file = scenario_case_file(target)
    if file is None:
        raise CliError(f"the pack {target} has no eval cases; give a case file's path instead")
    return file


def read_case_file(path: Path) -> CaseFile:
    text = read_text_file(path, f"case file '{path}'", MAX_CASE_FILE_BYTES)
    try:
        data = yaml.load(text, Loader=_LOADER)
    except RecursionError as error:
        raise CliError(f"case file '{path}' nests too deeply to read") from error
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        at = f" (line {where.line + 1}, column {where.column + 1})" if where else ""
        problem = getattr(error, "problem", None)
        why = f": {problem}" if problem else ""
        raise CliError(f"case file '{path}' is not valid YAML{at}{why}") from error
    try:
        loaded = CaseFile.model_validate(data)
    except ValidationError as error:
        raise CliError(f"case file '{path}': {_first_problem(error, data)}") from error
    try:
        pack_here(loaded.scenario)  # a pack only the workers have: their catalog decides
        for case in loaded.cases:
            _read_plan(case, path.parent)
    except HarnessError as error:
        raise CliError(f"case file '{path}': {error.message}") from error
    return loaded


def _read_plan(case: EvalCase, folder: Path) -> None:
    """The case's plan file, read into the case: the plan travels with it (a worker need not
    see the file)."""
    plan_file = case.options.plan_file
    if plan_file is not None:
        try:
            plan = load_plan(str(folder / plan_file))
        except HarnessError as error:
            raise CliError(f"case '{case.id}': {error.message}") from error
        case.options = case.options.model_copy(update={"plan": plan, "plan_file": None})


def _first_problem(error: ValidationError, data: Any) -> str:
    """`cases[2] (id 'two-cities'): expect.max_replan: unknown field; did you mean
    'max_replans'?`: the first problem at its place, in words."""
    problem = error.errors()[0]
    location = list(problem["loc"])
    place = ""
    if len(location) >= 2 and location[0] == "cases" and isinstance(location[1], int):
        index = location[1]
        case = data["cases"][index] if isinstance(data, dict) else None
        name = f" (id '{case['id']}')" if isinstance(case, dict) and "id" in case else ""
        place = f"cases[{index}]{name}: "
        location = location[2:]
    field = ".".join(str(part) for part in location) or "the file"
    if problem["type"] == "extra_forbidden":
        message = f"{field}: unknown field"
        close = difflib.get_close_matches(str(location[-1]), _FIELDS, n=1)
        message += f"; did you mean '{close[0]}'?" if close else ""
    else:
        message = f"{field}: {problem['msg']}"
    more = len(error.errors()) - 1
    return place + message + (f" (and {more} more problem(s))" if more else "")
