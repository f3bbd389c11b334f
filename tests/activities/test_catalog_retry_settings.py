"""A catalog whose tool asks for retry settings out of range is refused where it is listed,
with one line per setting that says what to use."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

import scenarios
from activities.catalog import CatalogActivities
from activities.mcp_hub import McpHub
from harness.core.errors import ErrorCode
from harness.engine.messages import CatalogRequest
from scenarios.registry import registered


@pytest.fixture
def overreaching() -> Iterator[str]:
    """The synthetic scenario, registered again as `overreaching` with a `delay` that asks for
    100 attempts and no wait between them."""
    synthetic = scenarios.get_scenario("synthetic")
    tools = tuple(
        dataclasses.replace(
            tool,
            spec=tool.spec.model_copy(update={"max_attempts": 100, "backoff_seconds": 0.0}),
        )
        if tool.spec.name == "delay"
        else tool
        for tool in synthetic.tools
    )
    scenario = dataclasses.replace(synthetic, name="overreaching", tools=tools)
    with registered(scenario):
        yield "overreaching"


async def test_a_tool_asking_for_retry_settings_out_of_range_is_refused_when_listed(
    overreaching: str,
) -> None:
    catalog = CatalogActivities(McpHub.from_environment({}))

    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(catalog.list_tools, CatalogRequest(scenario=overreaching))

    assert (refused.value.type, refused.value.non_retryable) == (
        ErrorCode.CONFIG_INVALID.value,
        True,
    )
    assert refused.value.message == (
        "the catalog of overreaching: tool 'delay': max_attempts is 100; use 1 to 10; "
        "tool 'delay': backoff_seconds is 0.0; use more than 0 and at most 60"
    )


async def test_every_built_in_scenarios_catalog_is_listed() -> None:
    catalog = CatalogActivities(McpHub.from_environment({}))
    for name in scenarios.scenario_names():
        listed = await ActivityEnvironment().run(catalog.list_tools, CatalogRequest(scenario=name))
        assert listed.retry_problems() == []
