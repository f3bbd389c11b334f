"""The offline planner reads its memory context: an entity earlier runs found missing is not
looked up again, on any attempt, unless a failed verification says the report lacks it."""

from __future__ import annotations

from activities.llm import ScriptedProvider
from harness.core.errors import FailureContext
from harness.engine.messages import PlanRequest
from harness.recall.memory_context import Memory, MemoryTier, WorkingMemory, assemble
from scenarios import get_scenario

CITIES = get_scenario("cities")


def _request(
    goal: str, missing: list[str], *, scenario: str = "cities", **fields: object
) -> PlanRequest:
    remembered = Memory(
        id="episode-r1",
        tier=MemoryTier.EPISODIC,
        text="Run of 'Compare Paris and Atlantis' (cities) ended SUCCEEDED. No data: Atlantis.",
        scenario=scenario,
        missing=missing,
    )
    context = assemble(WorkingMemory(goal=goal), [remembered])
    return PlanRequest.model_validate(
        {"run_id": "r2", "goal": goal, "scenario": "cities", "attempt": 1,
         "catalog": CITIES.catalog(), "memory": context} | fields
    )  # fmt: skip


async def _planned_ids(request: PlanRequest) -> list[str]:
    response = await ScriptedProvider().plan(request, CITIES)
    return response.plan.node_ids()


async def test_a_remembered_missing_city_is_not_looked_up_and_is_reported_missing() -> None:
    request = _request("Compare Rome, Atlantis and Vienna", ["Atlantis"])
    response = await ScriptedProvider().plan(request, CITIES)
    ids = response.plan.node_ids()
    assert "pop_atlantis" not in ids and "pop_rome" in ids and "pop_vienna" in ids
    report = response.plan.node("report")
    assert report is not None
    assert [b.value for b in report.arguments if b.name == "missing_cities"] == [["Atlantis"]]


async def test_on_a_replan_for_another_failure_the_memory_still_holds() -> None:
    oslo = FailureContext(
        tool="get_population", arguments={"city": "Oslo"}, code="MISSING_INFO", message="no data"
    )
    request = _request(
        "Compare Lisbon, Atlantis and Oslo", ["Atlantis"], attempt=2, failures=[oslo]
    )
    assert [i for i in await _planned_ids(request) if i.startswith("pop_")] == ["pop_lisbon"]


async def test_a_failed_verification_that_names_the_city_makes_the_planner_look_again() -> None:
    lacking = FailureContext(code="VERIFICATION_FAILED", message="the report does not mention Rome")
    request = _request("Compare Rome and Vienna", ["Rome"], attempt=2, failures=[lacking])
    assert "pop_rome" in await _planned_ids(request)


async def test_an_episode_of_another_scenario_changes_nothing() -> None:
    request = _request("Compare Rome, Atlantis and Vienna", ["Atlantis"], scenario="games")
    assert "pop_atlantis" in await _planned_ids(request)


async def test_a_tool_writing_under_pressure_asks_for_the_fallback_model() -> None:
    from harness.catalog.llm import TextRequest
    from scenarios.base import ToolContext

    writer = ScriptedProvider()
    calm = ToolContext(run_id="r", node_id="n", attempt=1, writer=writer)
    pressed = ToolContext(run_id="r", node_id="n", attempt=1, writer=writer, economy=True)
    ask = TextRequest(system="s", prompt="p", draft="d")
    assert (await calm.write(ask)).model == "scripted-v1"
    assert (await pressed.write(ask)).model == "scripted-v1-fallback"
