"""Search attributes that let runs be filtered in the UI and with `temporal workflow list`.

They are set only when the run was started with them (the `harness` CLI does so when the
server has them registered, as `harness server` and docker-compose do: ALL_KEYS is the list they
register); a run started without them still works, it just cannot be filtered.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.common import (
    SearchAttributeIndexedValueType,
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
)

PHASE = SearchAttributeKey.for_keyword("HarnessPhase")
SCENARIO = SearchAttributeKey.for_keyword("HarnessScenario")
PRESSURE = SearchAttributeKey.for_float("HarnessPressure")
PENDING_WAITS = SearchAttributeKey.for_int("HarnessPendingWaits")
GOAL = SearchAttributeKey.for_keyword("HarnessGoal")
"""The run's goal (its first GOAL_CHARS), set when it starts: a column of the UI's runs list."""
GOAL_CHARS = 200

TASK_SCOPE = SearchAttributeKey.for_keyword("HarnessTaskScope")
TASK_STATUS = SearchAttributeKey.for_keyword("HarnessTaskStatus")
TASK_PARENT = SearchAttributeKey.for_keyword("HarnessTaskParent")
"""A task entity's: so tasks are listed by scope, status and parent through visibility."""

TASK_KEYS = (TASK_SCOPE, TASK_STATUS, TASK_PARENT)

ALL_KEYS = (PHASE, SCENARIO, PRESSURE, PENDING_WAITS, GOAL, *TASK_KEYS)
"""Every search attribute the code sets: the one list that `harness server`, the tests' dev
server and docker-compose's namespace job register (tests/test_docker_compose.py holds the
compose file to it)."""

_CLI_TYPES = {
    SearchAttributeIndexedValueType.KEYWORD: "Keyword",
    SearchAttributeIndexedValueType.DOUBLE: "Double",
    SearchAttributeIndexedValueType.INT: "Int",
}


def cli_type(key: SearchAttributeKey[Any]) -> str:
    """The type's name as `temporal operator search-attribute create --type` and
    `temporal server start-dev --search-attribute NAME=TYPE` spell it."""
    return _CLI_TYPES[key.indexed_value_type]


def registrations() -> dict[str, str]:
    """Name -> CLI type of every attribute in ALL_KEYS, in its order."""
    return {key.name: cli_type(key) for key in ALL_KEYS}


def initial(scenario: str, phase: str) -> TypedSearchAttributes:
    return TypedSearchAttributes(
        [
            SearchAttributePair(PHASE, phase),
            SearchAttributePair(SCENARIO, scenario),
            SearchAttributePair(PRESSURE, 0.0),
            SearchAttributePair(PENDING_WAITS, 0),
        ]
    )


def with_goal(attributes: TypedSearchAttributes, goal: str) -> TypedSearchAttributes:
    """`attributes` and the run's goal, for a run started by a client (never from workflow
    code: the eval suite's children start as they always did)."""
    return TypedSearchAttributes([*attributes, SearchAttributePair(GOAL, goal[:GOAL_CHARS])])


def enabled() -> bool:
    return workflow.info().typed_search_attributes.get(PHASE) is not None


def upsert(phase: str, pressure: float, pending_waits: int) -> None:
    if not enabled():
        return
    workflow.upsert_search_attributes(
        [
            PHASE.value_set(phase),
            PRESSURE.value_set(round(pressure, 4)),
            PENDING_WAITS.value_set(pending_waits),
        ]
    )


def task_attributes(scope: str, status: str, parent: str | None) -> TypedSearchAttributes:
    pairs = [SearchAttributePair(TASK_SCOPE, scope), SearchAttributePair(TASK_STATUS, status)]
    if parent is not None:
        pairs.append(SearchAttributePair(TASK_PARENT, parent))
    return TypedSearchAttributes(pairs)


def upsert_task_status(status: str) -> None:
    if workflow.info().typed_search_attributes.get(TASK_SCOPE) is not None:
        workflow.upsert_search_attributes([TASK_STATUS.value_set(status)])
