"""The plan and verdict schemas, and how a model's reply becomes a Plan (or a clear failure)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from activities.llm import ProviderError
from activities.llm.structured import PLAN_SCHEMA, VERDICT_SCHEMA, parse_plan, parse_verdict
from harness.core.errors import ErrorClass, ErrorCode, classify
from harness.core.plan import ArgumentBinding, ArgumentKind
from scenarios import get_scenario
from scenarios.base import PlanningError, PlanningInput
from tests.providers.script import cities_plan_json

# The JSON-schema keywords both APIs' structured outputs constrain decoding with.
SUPPORTED_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum",
    "$ref", "$defs", "description", "title",
}  # fmt: skip


def _objects(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for key, value in schema.items():
            if key not in ("properties", "$defs"):
                found += _objects(value)
            else:
                for child in value.values():
                    found += _objects(child)
    elif isinstance(schema, list):
        for item in schema:
            found += _objects(item)
    return found


def _keywords(schema: Any) -> set[str]:
    if isinstance(schema, list):
        return set().union(*(_keywords(item) for item in schema))
    if not isinstance(schema, dict):
        return set()
    keys = set(schema)
    for key, value in schema.items():
        children = value.values() if key in ("properties", "$defs") else [value]
        keys |= set().union(*(_keywords(child) for child in children))
    return keys


@pytest.mark.parametrize("schema", [PLAN_SCHEMA, VERDICT_SCHEMA], ids=["plan", "verdict"])
def test_schemas_are_strict_every_object_requires_all_and_only_its_properties(
    schema: dict[str, Any],
) -> None:
    objects = _objects(schema)
    assert objects
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])


@pytest.mark.parametrize("schema", [PLAN_SCHEMA, VERDICT_SCHEMA], ids=["plan", "verdict"])
def test_schemas_use_only_keywords_that_structured_outputs_support(
    schema: dict[str, Any],
) -> None:
    assert _keywords(schema) <= SUPPORTED_KEYWORDS


def test_the_offline_cities_plan_survives_the_round_trip_through_the_schema() -> None:
    goal = "Compare Paris and Atlantis"
    scenario = get_scenario("cities")
    original = scenario.plan_offline(
        PlanningInput(goal, scenario.catalog(), attempt=1, failures=[], previous_plan=None)
    )
    assert parse_plan(cities_plan_json(goal)) == original


def test_a_literal_value_json_that_is_not_json_is_taken_as_the_string_it_spells() -> None:
    reply = {
        "nodes": [
            {
                "id": "pop",
                "tool": "get_population",
                "arguments": [
                    {"name": "city", "kind": "LITERAL", "value_json": "Paris", "node_id": None,
                     "path": None},
                    {"name": "extra", "kind": "LITERAL", "value_json": "[1, 2]", "node_id": None,
                     "path": None},
                ],
                "deps": [],
            }
        ],
        "cannot_plan": None,
    }  # fmt: skip
    node = parse_plan(json.dumps(reply)).nodes[0]
    assert node.arguments == [
        ArgumentBinding.literal("city", "Paris"),
        ArgumentBinding.literal("extra", [1, 2]),
    ]


def test_a_node_result_binding_keeps_its_node_and_path() -> None:
    binding = {"name": "populations", "kind": "NODE_RESULT", "value_json": None,
               "node_id": "pop", "path": "population"}  # fmt: skip
    node = {"id": "r", "tool": "aggregate_report", "arguments": [binding], "deps": ["pop"]}
    plan = parse_plan(json.dumps({"nodes": [node], "cannot_plan": None}))
    assert plan.nodes[0].arguments[0] == ArgumentBinding(
        name="populations", kind=ArgumentKind.NODE_RESULT, node_id="pop", path="population"
    )


def test_a_plan_in_a_markdown_fence_is_still_read() -> None:
    fenced = "```json\n" + cities_plan_json("Compare Paris and Tokyo") + "\n```"
    assert len(parse_plan(fenced).nodes) == 7


def test_prose_instead_of_a_plan_is_invalid_model_output_that_names_the_problem() -> None:
    with pytest.raises(ProviderError) as raised:
        parse_plan("Sure! First I will look up Paris, then Tokyo.")
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert classify(raised.value.code) is ErrorClass.VALIDATION
    assert "not a plan" in raised.value.message
    assert "Sure! First" in raised.value.message


def test_a_plan_missing_fields_names_each_missing_field() -> None:
    with pytest.raises(ProviderError) as raised:
        parse_plan('{"nodes": [{"id": "a", "arguments": [], "deps": []}], "cannot_plan": null}')
    assert "nodes.0.tool: Field required" in raised.value.message


def test_a_model_that_says_the_goal_cannot_be_planned_raises_a_planning_error() -> None:
    with pytest.raises(PlanningError, match="no city is named"):
        parse_plan('{"nodes": [], "cannot_plan": "no city is named in the goal"}')


def test_a_verdict_is_read_from_the_reply() -> None:
    verdict = parse_verdict('{"passed": false, "score": 0.4, "reasons": ["Tokyo is missing"]}')
    assert (verdict.passed, verdict.score, verdict.reasons) == (False, 0.4, ["Tokyo is missing"])


def test_a_verdict_score_outside_zero_to_one_is_invalid_model_output() -> None:
    with pytest.raises(ProviderError) as raised:
        parse_verdict('{"passed": true, "score": 7, "reasons": []}')
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert "not in [0, 1]" in raised.value.message


PLAN_JSON = cities_plan_json("Compare Paris and Tokyo")
VERDICT_JSON = '{"passed": true, "score": 0.9, "reasons": ["both cities are compared"]}'


def test_a_plan_after_prose_is_read() -> None:
    assert len(parse_plan(f"Here is the plan you asked for:\n{PLAN_JSON}\nGood luck!").nodes) == 7


def test_a_plan_in_a_fence_after_prose_is_read() -> None:
    reply = f"Sure. The plan:\n\n```json\n{PLAN_JSON}\n```\n\nIt looks up both cities first."
    assert len(parse_plan(reply).nodes) == 7


def test_a_plan_after_a_think_block_is_read_and_the_thinking_ignored() -> None:
    thinking = '<think>\nMaybe {"nodes": [], "cannot_plan": "no"}? No, look up both.\n</think>\n'
    assert len(parse_plan(thinking + PLAN_JSON).nodes) == 7


def test_a_plan_after_a_think_block_that_was_opened_in_the_prompt_is_read() -> None:
    assert len(parse_plan("Paris first, then Tokyo.\n</think>\n\n" + PLAN_JSON).nodes) == 7


def test_a_plan_after_a_think_block_never_closed_is_read() -> None:
    reply = "<think>\nI need {population} and timezones of two cities.\n\n" + PLAN_JSON
    assert len(parse_plan(reply).nodes) == 7


def test_the_last_object_that_is_a_plan_is_the_answer() -> None:
    draft = f'First a sketch: {{"nodes": "todo"}}. Then the plan: {PLAN_JSON}'
    assert len(parse_plan(draft).nodes) == 7


def test_raw_control_characters_inside_json_strings_are_read_as_those_characters() -> None:
    reply = '{"passed": true, "score": 1, "reasons": ["both\tcities\nare compared"]}'
    assert parse_verdict(reply).reasons == ["both\tcities\nare compared"]


def test_a_verdict_after_prose_and_thinking_with_control_characters_is_read() -> None:
    reply = "<think>easy</think>The verdict:\n" + VERDICT_JSON.replace(" are", "\n are")
    assert parse_verdict(reply).reasons == ["both cities\n are compared"]


def test_prose_around_an_object_that_is_not_a_plan_names_that_objects_problems() -> None:
    with pytest.raises(ProviderError) as raised:
        parse_plan('Here you go: {"nodes": [{"id": "a", "arguments": [], "deps": []}]} done')
    assert "nodes.0.tool: Field required" in raised.value.message
    assert "Here you go" in raised.value.message


def test_a_reply_cut_off_inside_its_json_is_invalid_model_output() -> None:
    with pytest.raises(ProviderError) as raised:
        parse_plan("<think>ok</think>" + PLAN_JSON[: len(PLAN_JSON) // 2])
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert "is not a plan" in raised.value.message
