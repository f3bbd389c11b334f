"""A tool's own retry settings: defaults, ranges, and the policy a call is made with."""

from __future__ import annotations

import math

import pytest

from harness.catalog.tools import (
    DEFAULT_TOOL_ATTEMPTS,
    MAX_TOOL_ATTEMPTS,
    CallPolicy,
    NativeWait,
    ToolCatalog,
    ToolSpec,
)


def spec(**settings: object) -> ToolSpec:
    return ToolSpec.model_validate(
        {"name": "lookup", "description": "look up", "arguments_schema": {}, **settings}
    )


def test_a_tool_without_settings_keeps_todays_three_attempts_and_house_timeout() -> None:
    plain = spec()

    assert (plain.max_attempts, plain.timeout_seconds) == (DEFAULT_TOOL_ATTEMPTS, None)
    assert plain.call_policy(3) == CallPolicy(max_attempts=3)
    assert plain.retry_problems() == []


def test_default_retry_settings_stay_out_of_the_catalog_payload() -> None:
    dumped = spec().model_dump_json()
    own = spec(max_attempts=5, timeout_seconds=20, backoff_seconds=0.5).model_dump()

    assert "max_attempts" not in dumped and "timeout_seconds" not in dumped
    assert (own["max_attempts"], own["timeout_seconds"], own["backoff_seconds"]) == (5, 20, 0.5)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"max_attempts": 0}, "max_attempts is 0; use 1 to 10"),
        ({"max_attempts": MAX_TOOL_ATTEMPTS + 1}, "max_attempts is 11"),
        ({"max_attempts": 10**5000}, "max_attempts is 1000000000 or more"),
        ({"timeout_seconds": 0}, "timeout_seconds is 0"),
        ({"timeout_seconds": -5}, "timeout_seconds is -5"),
        ({"timeout_seconds": 3601}, "timeout_seconds is 3601"),
        ({"timeout_seconds": math.nan}, "timeout_seconds is nan"),
        ({"timeout_seconds": math.inf}, "timeout_seconds is inf"),
        ({"backoff_seconds": 0}, "backoff_seconds is 0"),
        ({"backoff_seconds": 61}, "backoff_seconds is 61"),
    ],
)
def test_retry_settings_out_of_range_are_named_with_what_to_use(
    settings: dict[str, object], named: str
) -> None:
    problems = spec(**settings).retry_problems()

    assert len(problems) == 1
    assert problems[0].startswith("tool 'lookup': ") and named in problems[0]
    assert "use " in problems[0]


def test_a_catalog_lists_every_tools_problems() -> None:
    catalog = ToolCatalog(
        scenario="s", tools=[spec(), spec(name="a", max_attempts=0, backoff_seconds=-1)]
    )

    assert len(catalog.retry_problems()) == 2


def test_a_call_policy_takes_the_reserved_attempts_and_the_tools_timeout_and_backoff() -> None:
    own = spec(max_attempts=5, timeout_seconds=20, backoff_seconds=0.5)

    assert own.call_policy(2) == CallPolicy(max_attempts=2, timeout_seconds=20, backoff_seconds=0.5)


def test_a_call_policy_never_carries_a_setting_out_of_range() -> None:
    """A catalog from elsewhere (never listed by this code) may hold one: the workflow builds
    its retry policy from the call policy, and must not fail on it."""
    bad = spec(timeout_seconds=math.nan, backoff_seconds=10**9)

    assert bad.call_policy(3) == CallPolicy(max_attempts=3)


@pytest.mark.parametrize(
    ("settings", "attempts"),
    [
        ({}, 3),
        ({"max_attempts": 5}, 5),
        ({"max_attempts": 5, "side_effects": True}, 1),
        ({"max_attempts": 5, "side_effects": True, "idempotent": True}, 5),
        ({"native_wait": NativeWait.TIMER}, 1),
        ({"max_attempts": 10**9}, MAX_TOOL_ATTEMPTS),
        ({"max_attempts": -1}, 1),
    ],
)
def test_the_attempts_one_call_may_make(settings: dict[str, object], attempts: int) -> None:
    assert spec(**settings).attempts_per_call() == attempts
