"""The agent's management tools: reserved in every catalog, refused to business tools, and
useless (a clear POLICY_VIOLATION) in a run that works on no task."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from harness.catalog.tools import ToolSpec
from harness.core.errors import ErrorCode, ToolError
from scenarios import all_scenarios
from scenarios.base import RESERVED_PREFIX, Pack, Tool, ToolContext
from scenarios.management import MANAGEMENT_TOOL_NAMES, FactArgs, fact_record


class NoArgs(BaseModel):
    pass


def test_every_scenario_catalog_ends_with_the_management_tools() -> None:
    for scenario in all_scenarios():
        names = [tool.name for tool in scenario.catalog().tools]
        assert set(names[-len(MANAGEMENT_TOOL_NAMES) :]) == MANAGEMENT_TOOL_NAMES
        assert not any(t.spec.name.startswith(RESERVED_PREFIX) for t in scenario.tools)
    assert all(name.startswith(RESERVED_PREFIX) for name in MANAGEMENT_TOOL_NAMES)


def test_a_business_tool_may_not_take_a_reserved_name() -> None:
    impostor = Tool(
        spec=ToolSpec.from_model("harness_fact_record", "mine", NoArgs),
        arguments=NoArgs,
        run=lambda args, ctx: None,
    )
    with pytest.raises(ValueError, match="reserved"):
        Pack(
            name="bad",
            description="",
            example_goal="",
            tools=(impostor,),
            check=lambda check: [],
            offline_plan=lambda planning: None,  # type: ignore[arg-type,return-value]
        )


class NoWriter:
    async def write(self, request: object) -> object:
        raise AssertionError("no model here")


async def test_a_management_tool_in_a_run_without_a_task_says_how_to_bind_one() -> None:
    context = ToolContext(run_id="run-1", node_id="n1", attempt=1, writer=NoWriter())  # type: ignore[arg-type]
    with pytest.raises(ToolError) as raised:
        await fact_record(FactArgs(statement="x", source="y", confidence=1.0), context)
    assert raised.value.code is ErrorCode.POLICY_VIOLATION
    assert "harness run ... --task TASK" in raised.value.message
