"""The trace keeps its events in time order whatever order they are recorded in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from harness.engine.budget import Budget, BudgetLimits
from harness.engine.trace import TraceKind, TraceLog

T0 = datetime(2026, 12, 2, tzinfo=UTC)


def _log() -> TraceLog:
    return TraceLog("run-1", None, Budget(BudgetLimits(), lambda: 0.0), lambda: T0)


def test_an_event_from_the_past_lands_after_every_event_at_or_before_its_time() -> None:
    log = _log()
    for second, node_id in ((1, "a"), (3, "b"), (3, "c"), (5, "d")):
        log.emit(TraceKind.NODE_START, node_id=node_id, at=T0 + timedelta(seconds=second))
    log.emit(TraceKind.NODE_FINISH, node_id="late", at=T0 + timedelta(seconds=3))
    log.emit(TraceKind.NODE_FINISH, node_id="early", at=T0)
    assert [event.node_id for event in log.events] == ["early", "a", "b", "c", "late", "d"]
    assert [event.node_id for event in log.recorded] == ["a", "b", "c", "d", "late", "early"]
