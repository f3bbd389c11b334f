"""Progress shows each trace event once, even one that lands before events shown already."""

from __future__ import annotations

from datetime import timedelta

from harness.engine.trace import TraceEvent, TraceKind
from starter.cli.progress import new_events, progress_line
from tests.factories import START


def _event(kind: TraceKind, seconds: float, node: str | None = None) -> TraceEvent:
    return TraceEvent(
        at=START + timedelta(seconds=seconds), run_id="r", kind=kind, attempt=1, node_id=node
    )


def test_an_event_inserted_before_shown_ones_is_shown_once_and_nothing_twice() -> None:
    shown: set[str] = set()
    first = [_event(TraceKind.RUN_START, 0), _event(TraceKind.NODE_FINISH, 2, "a")]
    assert new_events(first, shown) == first
    retry = _event(TraceKind.NODE_RETRY, 1, "b")  # stamped when the retry began
    later = [first[0], retry, first[1], _event(TraceKind.NODE_FINISH, 3, "b")]
    assert new_events(later, shown) == [retry, later[3]]
    assert new_events(later, shown) == []


def test_a_line_says_when_what_and_where_with_the_pressure() -> None:
    line = progress_line(
        _event(TraceKind.NODE_FINISH, 1.5, "pop_paris"), _event(TraceKind.RUN_START, 0)
    )
    assert line.split() == ["1.50s", "node.finish", "pop_paris", "pressure", "0.00"]
