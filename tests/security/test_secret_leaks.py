"""F8: secrets leak into memory episodes, the worker log and MCP servers' stderr."""

from __future__ import annotations

from harness.episodes import episode_of
from harness.errors import FailureContext
from harness.run import AttemptRecord, RunPhase
from tests.factories import START, lit, node, plan, run_result

GOOGLE_KEY = "AIzaSyD8f3kQ2xVb7Lm9Pq4Rt6Wn1Yc5Ze0Hj_U"
STRIPE_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc9fG2kQx8"


def test_episode_stores_no_google_or_stripe_key() -> None:
    failure = FailureContext(
        node_id="geo",
        tool="geocode",
        arguments={"city": f"Paris&key={GOOGLE_KEY}"},
        code="MISSING_INFO",
        message=f"charge with {STRIPE_KEY} refused; maps key {GOOGLE_KEY} over quota",
    )
    attempt = AttemptRecord(
        attempt=1,
        plan=plan(node("geo", "geocode", lit("city", "Paris"))),
        outcome=RunPhase.FAILED_EXECUTION,
        failure=[failure],
    )
    result = run_result(
        goal=f"Refund with {STRIPE_KEY} and geocode with {GOOGLE_KEY}",
        status=RunPhase.FAILED_EXECUTION,
        attempt_history=[attempt],
    )
    stored = episode_of(result, "default", START).record().model_dump_json()
    assert GOOGLE_KEY not in stored
    assert STRIPE_KEY not in stored
    assert "[redacted]" in stored
