"""The planner's prompt as the providers send it. It stays small enough for a small model's
context and a hosted model's bill: measured as the OpenAI provider sends it in strict mode (system
plus user message), against the 0.9.0 prompt of 8,285 characters (`python -m bench.prompt_size`
prints the figure per scenario). A plan cut off at its limit is replanned smaller."""

from __future__ import annotations

import pytest

from activities.llm import LLMProvider, ProviderError
from activities.llm.prompts import planner_user
from harness.core.errors import ErrorCode, FailureContext
from harness.engine.messages import PlanRequest
from harness.governance.work import TaskBinding
from scenarios import get_scenario
from tests.fakes import FakeApi, FakeServer, Usage
from tests.providers.script import PLAN_USAGE, cities_plan_json

CITIES = get_scenario("cities")
GOAL = "Compare Lisbon and Seoul"
PROMPT_0_9_0 = 8285
"""The cities planner prompt for GOAL in version 0.9.0, system plus user message."""


def _request(task: TaskBinding | None = None) -> PlanRequest:
    return PlanRequest(
        run_id="run-size",
        goal=GOAL,
        scenario="cities",
        attempt=1,
        catalog=CITIES.catalog(),
        task=task,
    )


async def _sent(
    api: FakeApi, server: FakeServer, provider: LLMProvider, request: PlanRequest
) -> tuple[str, str]:
    server.enqueue(api.text_reply(cities_plan_json(GOAL), PLAN_USAGE))
    await provider.plan(request, CITIES)
    sent = server.requests[-1]
    return api.system_text(sent), api.user_text(sent)


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_the_cities_planner_prompt_is_at_most_60_percent_of_version_0_9_0s(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    system, user = await _sent(api, server, provider, _request())

    assert server.requests[-1].body["response_format"]["type"] == "json_schema"
    assert len(system) + len(user) <= PROMPT_0_9_0 * 60 // 100  # 4,971


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_a_run_on_no_task_is_shown_only_the_management_tool_that_creates_one(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    unbound, _ = await _sent(api, server, provider, _request())
    bound, _ = await _sent(
        api, server, provider, _request(TaskBinding(scope="default", task_id="t-1"))
    )

    shown = {line.removeprefix("## ").split()[0] for line in unbound.splitlines() if "## " in line}
    assert {name for name in shown if name.startswith("harness_")} == {"harness_task_manage"}
    assert "## harness_fact_record\n" in bound and "## harness_task_manage\n" in bound


@pytest.mark.parametrize("api", ["openai"], indirect=True)
async def test_a_shared_type_is_written_once_and_each_typed_result_is_shown(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    system, _ = await _sent(api, server, provider, _request())

    assert system.count("PopulationFact = {") == 1
    assert system.count("CityArgs = {") == 1
    assert "## get_population\n" in system and "\nResult: PopulationFact\n" in system
    assert '"path":"temp_c"' in system  # the worked example binds a field of a result


async def test_a_plan_cut_off_at_its_limit_is_replanned_with_its_size_and_fewer_nodes(
    api: FakeApi, server: FakeServer, provider: LLMProvider
) -> None:
    partial = cities_plan_json(GOAL)[:700]
    server.enqueue(api.text_reply(partial, Usage(900, 4000), cut_off=True))
    with pytest.raises(ProviderError) as raised:
        await provider.plan(_request(), CITIES)
    begun = partial.count('"tool"')
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert raised.value.message.endswith(f"after 700 characters and {begun} nodes")

    failure = FailureContext(code=raised.value.code.value, message=raised.value.message)
    replan = _request().model_copy(update={"attempt": 2, "failures": [failure]})
    prompt = planner_user(replan)

    assert (
        f"The previous plan was cut off at the reply's length limit after 700 characters and "
        f"{begun} nodes: plan fewer nodes (at most 2)" in prompt
    )


def test_a_replan_after_another_failure_is_not_asked_for_fewer_nodes() -> None:
    failure = FailureContext(code="INVALID_MODEL_OUTPUT", message="the reply is not JSON")
    replan = _request().model_copy(update={"attempt": 2, "failures": [failure]})

    assert "fewer nodes" not in planner_user(replan)
