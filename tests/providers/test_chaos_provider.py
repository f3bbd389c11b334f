"""The chaos provider around the offline one: each mistake it injects into a planner call is the
one a real model or server makes, marked as injected; a retry of a failed call draws again; and
the registry builds it from a `chaos:` provider name."""

from __future__ import annotations

import pytest

from activities.llm import ProviderConfigError, ProviderError, ProviderRegistry, ScriptedProvider
from activities.llm.chaos import ChaosProvider
from harness.catalog.llm import TextRequest
from harness.core.errors import ErrorCode
from harness.core.plan import ArgumentKind
from harness.engine.messages import PlanRequest, PlanResponse
from harness.engine.validation import validate_plan
from harness.evals.chaos import ChaosKind, ChaosSpec, marked_kinds
from scenarios import get_scenario
from scenarios.base import Pack, PlanningError

CITIES = get_scenario("cities")
CATALOG = CITIES.catalog()


def request(attempt: int = 1) -> PlanRequest:
    return PlanRequest(
        run_id="r-1",
        goal="Compare Paris and Tokyo",
        scenario="cities",
        attempt=attempt,
        catalog=CATALOG,
    )


def spec_drawing(*kinds: ChaosKind | None) -> ChaosSpec:
    """A spec whose planner call 1 draws `kinds` on activity attempts 1, 2, ... (found by
    trying keys in order: the draws are a pure function of the key)."""
    for number in range(100_000):
        spec = ChaosSpec(rate=0.5, seed=38, key=f"k{number}", inner="scripted")
        if all(spec.draw("plan-1", at) is kind for at, kind in enumerate(kinds, 1)):
            return spec
    raise AssertionError(f"no key draws {kinds}")


async def plan_with(spec: ChaosSpec, attempt: int = 1) -> PlanResponse:
    provider = ChaosProvider(ScriptedProvider(), spec, attempt=lambda: attempt)
    return await provider.plan(request(), CITIES)


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        (ChaosKind.UNKNOWN_TOOL, "UNKNOWN_TOOL"),
        (ChaosKind.MISSING_ARGUMENT, "MISSING_REQUIRED_ARGUMENT"),
        (ChaosKind.CYCLE, "CYCLE"),
    ],
)
async def test_a_plan_mistake_changes_the_plan_so_that_the_validator_refuses_it(
    kind: ChaosKind, code: str
) -> None:
    response = await plan_with(spec_drawing(kind))
    issues = validate_plan(response.plan, CATALOG)
    assert code in {issue.code.value for issue in issues}
    assert marked_kinds(response.planned_by) == [kind]
    assert response.planned_by.startswith("scripted:")
    assert response.usage.total_tokens > 0  # what the model call cost


async def test_a_bad_path_names_a_path_the_node_s_result_does_not_have() -> None:
    clean = await ScriptedProvider().plan(request(), CITIES)
    response = await plan_with(spec_drawing(ChaosKind.BAD_PATH))
    paths = [
        (node.id, b.name, b.path)
        for node in response.plan.nodes
        for b in node.arguments
        if b.kind is ArgumentKind.NODE_RESULT
    ]
    before = [
        (node.id, b.name, b.path)
        for node in clean.plan.nodes
        for b in node.arguments
        if b.kind is ArgumentKind.NODE_RESULT
    ]
    assert [p for p in paths if p not in before] == [(paths[0][0], paths[0][1], "result")]
    assert marked_kinds(response.planned_by) == [ChaosKind.BAD_PATH]


@pytest.mark.parametrize(
    ("kind", "code", "retry_after"),
    [
        (ChaosKind.HTTP_500, ErrorCode.PROVIDER_UNAVAILABLE, None),
        (ChaosKind.HTTP_429, ErrorCode.RATE_LIMITED, 1.0),
        (ChaosKind.TIMEOUT, ErrorCode.TIMEOUT, None),
    ],
)
async def test_a_transport_mistake_raises_the_provider_error_a_real_server_causes(
    kind: ChaosKind, code: ErrorCode, retry_after: float | None
) -> None:
    with pytest.raises(ProviderError) as raised:
        await plan_with(spec_drawing(kind))
    assert raised.value.code is code
    assert raised.value.retry_after == retry_after
    assert marked_kinds(raised.value.message) == [kind]


async def test_a_500_on_the_first_attempt_is_gone_on_the_retry_which_says_it_recovered() -> None:
    spec = spec_drawing(ChaosKind.HTTP_500, None)
    with pytest.raises(ProviderError):
        await plan_with(spec, attempt=1)
    response = await plan_with(spec, attempt=2)
    assert validate_plan(response.plan, CATALOG) == []
    assert marked_kinds(response.planned_by) == [ChaosKind.HTTP_500]


async def test_retries_that_fail_again_carry_every_mistake_so_far() -> None:
    spec = spec_drawing(ChaosKind.HTTP_429, ChaosKind.TIMEOUT)
    with pytest.raises(ProviderError) as raised:
        await plan_with(spec, attempt=2)
    assert marked_kinds(raised.value.message) == [ChaosKind.HTTP_429, ChaosKind.TIMEOUT]


async def test_a_cut_off_reply_fails_as_invalid_output_and_carries_what_the_call_cost() -> None:
    with pytest.raises(ProviderError) as raised:
        await plan_with(spec_drawing(ChaosKind.CUT_OFF))
    assert raised.value.code is ErrorCode.INVALID_MODEL_OUTPUT
    assert "cut off (length)" in raised.value.message
    assert raised.value.usage is not None and raised.value.usage.total_tokens > 0
    assert marked_kinds(raised.value.message) == [ChaosKind.CUT_OFF]


async def test_prose_wrapped_json_goes_through_the_parser_as_a_real_reply_does() -> None:
    """A parser that finds the JSON in the prose gives back the inner plan; one that does not
    fails the call as invalid output (a replan): marked prose_json either way."""
    clean = await ScriptedProvider().plan(request(), CITIES)
    try:
        response = await plan_with(spec_drawing(ChaosKind.PROSE_JSON))
    except ProviderError as error:
        assert error.code is ErrorCode.INVALID_MODEL_OUTPUT
        assert marked_kinds(error.message) == [ChaosKind.PROSE_JSON]
        assert error.usage is not None
    else:
        assert response.plan == clean.plan
        assert marked_kinds(response.planned_by) == [ChaosKind.PROSE_JSON]


async def test_a_spurious_cannot_plan_is_the_model_saying_no_plan_can_work() -> None:
    with pytest.raises(PlanningError, match="cannot plan") as raised:
        await plan_with(spec_drawing(ChaosKind.CANNOT_PLAN))
    assert marked_kinds(str(raised.value)) == [ChaosKind.CANNOT_PLAN]


async def test_a_call_drawn_clean_is_the_inner_provider_s_own_reply() -> None:
    clean = await ScriptedProvider().plan(request(), CITIES)
    assert await plan_with(spec_drawing(None)) == clean


async def test_the_writer_passes_through_unchanged() -> None:
    text = TextRequest(system="s", prompt="p", draft="the draft")
    provider = ChaosProvider(ScriptedProvider(), ChaosSpec(rate=1.0, seed=1, key="k"))
    assert await provider.write(text) == await ScriptedProvider().write(text)


class Named(ScriptedProvider):
    name = "named"

    async def plan(self, request: PlanRequest, scenario: Pack) -> PlanResponse:
        return await super().plan(request, scenario)


def test_the_registry_wraps_the_named_inner_provider_or_its_default() -> None:
    registry = ProviderRegistry(default="scripted", factories={"scripted": Named})
    wrapped = registry.get("chaos:0.3:38:cities/a#1:scripted")
    assert isinstance(wrapped, ChaosProvider)
    assert isinstance(registry.get("chaos:0.3:38:cities/a#1:"), ChaosProvider)
    fixed = ProviderRegistry.always(Named())
    assert isinstance(fixed.get("chaos:0.3:38:k:"), ChaosProvider)  # tests' fixed provider too
    with pytest.raises(ProviderConfigError, match="not a chaos provider name"):
        registry.get("chaos:0.3")
