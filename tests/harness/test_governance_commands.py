"""The governance commands share one envelope, and the JSON they are recorded in stays the same:
every task, graph and rules command in tests/histories parses, and dumps its recorded fields
again, with the same values, in the same order."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from harness.governance.scope_rules import RulesCommand
from harness.governance.task_commands import BindRun, GovernanceCommand, TaskCommand
from harness.governance.task_graph import CreateTask, GraphCommand
from tests.history_manifests import recorded_histories


def _dicts(value: Any) -> Iterator[dict[str, Any]]:
    """Every object in a JSON value, at any depth."""
    children: list[Any] = []
    if isinstance(value, dict):
        yield value
        children = list(value.values())
    elif isinstance(value, list):
        children = value
    for child in children:
        yield from _dicts(child)


def _json(data: str) -> Any:
    try:
        return json.loads(base64.b64decode(data))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None  # not JSON: compressed, or binary


@cache
def _recorded() -> tuple[tuple[str, str], ...]:
    """(history file, one command's recorded JSON) for every command in every history, wherever
    its payload sits (inputs, results, update arguments)."""
    found: list[tuple[str, str]] = []
    for path in recorded_histories():
        for node in _dicts(json.loads(path.read_text())):
            if not (isinstance(node.get("data"), str) and "metadata" in node):
                continue
            found.extend(
                (path.name, json.dumps(command))
                for command in _dicts(_json(node["data"]))
                if "actor" in command and "operation" in command
            )
    return tuple(found)


def _parsed(recorded: dict[str, Any]) -> BaseModel:
    """The one command model the recorded JSON is (a scope's graph and rules share a shape)."""
    models = [TaskCommand] if "task_id" in recorded else [GraphCommand, RulesCommand]
    parsed: list[BaseModel] = []
    for model in models:
        try:
            parsed.append(model.model_validate(recorded))
        except ValidationError:
            continue
    assert len(parsed) == 1, recorded
    return parsed[0]


def _kept(recorded: Any, dumped: Any) -> bool:
    """`recorded` stands in `dumped` unchanged: the same values, dict keys in the same order;
    `dumped` may add fields that came later (their defaults)."""
    if isinstance(recorded, dict):
        return (
            isinstance(dumped, dict)
            and [key for key in dumped if key in recorded] == list(recorded)
            and all(_kept(value, dumped[key]) for key, value in recorded.items())
        )
    if isinstance(recorded, list):
        return (
            isinstance(dumped, list)
            and len(recorded) == len(dumped)
            and all(_kept(a, b) for a, b in zip(recorded, dumped, strict=True))
        )
    return bool(recorded == dumped)


def test_histories_hold_task_graph_and_rules_commands() -> None:
    kinds = {type(_parsed(json.loads(raw))).__name__ for _, raw in _recorded()}
    assert kinds == {"TaskCommand", "GraphCommand", "RulesCommand"}


def test_every_recorded_command_parses_and_dumps_its_fields_in_their_order() -> None:
    for history, raw in _recorded():
        recorded = json.loads(raw)
        parsed = _parsed(recorded)
        dumped = parsed.model_dump(mode="json")
        assert _kept(recorded, dumped), (history, raw, dumped)
        assert type(parsed).model_validate(dumped) == parsed


def test_a_command_recorded_with_every_field_dumps_to_exactly_its_recorded_json() -> None:
    """0.10 recorded the signature: nothing was added since, so nothing may differ."""
    complete = [(history, raw) for history, raw in _recorded() if '"signature"' in raw]
    assert complete
    for history, raw in complete:
        recorded = json.loads(raw)
        dumped = json.loads(_parsed(recorded).model_dump_json())
        assert _kept(recorded, dumped) and _kept(dumped, recorded), (history, raw, dumped)


def test_each_command_leads_with_what_it_is_for_then_the_shared_envelope() -> None:
    envelope = ["actor", "operation", "idempotency_key", "signature"]
    assert list(GovernanceCommand.model_fields) == envelope
    # a task's command adds the writer's fence (harness.governance.fencing), after the envelope
    assert list(TaskCommand.model_fields) == ["task_id", *envelope, "fence"]
    assert list(GraphCommand.model_fields) == ["scope", *envelope]
    assert list(RulesCommand.model_fields) == ["scope", *envelope]


def test_a_recorded_command_parses_to_the_command_built_by_name() -> None:
    bind = json.loads(next(raw for _, raw in _recorded() if '"bind_run"' in raw))
    assert _parsed(bind) == TaskCommand(
        task_id=bind["task_id"],
        actor=bind["actor"],
        operation=BindRun(run_id=bind["operation"]["run_id"]),
        idempotency_key=bind["idempotency_key"],
    )
    create = json.loads(next(raw for _, raw in _recorded() if '"create_task"' in raw))
    assert _parsed(create) == GraphCommand(
        scope=create["scope"],
        actor=create["actor"],
        operation=CreateTask(title=create["operation"]["title"]),
        idempotency_key=create["idempotency_key"],
    )
