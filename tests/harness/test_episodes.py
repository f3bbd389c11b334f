"""An episode says what a run learned: its ending, what failed and why, what each replan
changed, and what it cost; nothing that looks like a secret."""

from __future__ import annotations

from harness.core.errors import FailureContext
from harness.core.usage import TokenUsage
from harness.engine.episodes import episode_of, missing_entities
from harness.engine.run import AttemptRecord, RunCounts, RunPhase, Verdict
from harness.recall.memory_context import MemoryTier
from tests.factories import START, lit, node, plan, run_result

ATLANTIS = FailureContext(
    node_id="pop_atlantis",
    tool="get_population",
    arguments={"city": "Atlantis"},
    code="MISSING_INFO",
    message="no data for a city called 'Atlantis'",
)


def _replanned() -> list[AttemptRecord]:
    first = plan(
        node("pop_paris", "get_population", lit("city", "Paris")),
        node("pop_atlantis", "get_population", lit("city", "Atlantis")),
    )
    second = plan(node("pop_paris", "get_population", lit("city", "Paris")))
    return [
        AttemptRecord(attempt=1, plan=first, outcome=RunPhase.FAILED_EXECUTION, failure=[ATLANTIS]),
        AttemptRecord(attempt=2, plan=second, outcome=RunPhase.SUCCEEDED),
    ]


def test_an_episode_names_the_missing_entity_the_failure_and_what_the_replan_dropped() -> None:
    result = run_result(
        goal="Compare Paris and Atlantis",
        attempts=2,
        attempt_history=_replanned(),
        verdict=Verdict(passed=True, reasons=["the report repeats 3 of 3 facts"]),
        counts=RunCounts(tool_calls=3),
        usage=TokenUsage(input_tokens=900, output_tokens=100, cost_usd=0.0012),
        wall_seconds=2.5,
        session_id="s-1",
    )
    episode = episode_of(result, "shop", START)
    assert episode.missing == ["Atlantis"]
    assert episode.failures == [
        "MISSING_INFO get_population(city=Atlantis): no data for a city called 'Atlantis'"
    ]
    assert episode.replans == ["attempt 2 dropped pop_atlantis"]
    text = episode.text()
    assert text.startswith("Run of 'Compare Paris and Atlantis' (cities) ended SUCCEEDED after 1")
    assert "No data: Atlantis." in text and "3 tool calls, 1000 tokens, $0.0012, 2.5 s" in text
    memory = episode.record()
    assert memory.id == "episode-run-1" and memory.tier is MemoryTier.EPISODIC
    assert (memory.scope, memory.session_id, memory.missing) == ("shop", "s-1", ["Atlantis"])


def test_a_run_that_failed_without_node_failures_keeps_its_error_as_the_reason() -> None:
    result = run_result(status=RunPhase.CANCELLED, error="cancelled: by human:ada")
    episode = episode_of(result, "default", START)
    assert episode.status == "CANCELLED" and episode.verdict == ["cancelled: by human:ada"]


def test_only_missing_info_failures_name_missing_entities() -> None:
    timeout = ATLANTIS.model_copy(update={"code": "TIMEOUT", "arguments": {"city": "Rome"}})
    assert missing_entities([timeout, ATLANTIS, ATLANTIS]) == ["Atlantis"]


def test_an_episode_of_a_goal_with_a_key_in_it_keeps_no_key() -> None:
    result = run_result(goal="Use sk-ant-api03-" + "k" * 40 + " to compare Paris")
    memory = episode_of(result, "default", START).record()
    assert "kkkkkkkkkk" not in memory.model_dump_json()
    assert "[redacted]" in memory.text
