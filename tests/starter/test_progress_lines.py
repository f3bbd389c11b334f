"""Progress shows each trace event once, even one that lands before events shown already."""

from __future__ import annotations

from datetime import timedelta

from harness.engine.progress_page import ProgressPage
from harness.engine.run import RunCounts, RunPhase
from harness.engine.trace import TraceEvent, TraceKind
from starter.cli.progress import RunView, new_events, progress_line
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


class Lines(RunView):
    def __init__(self) -> None:
        super().__init__("r")
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        self.lines.append(text)


def _page(*events: TraceEvent) -> ProgressPage:
    return ProgressPage(
        events=list(events), next=len(events), phase=RunPhase.EXECUTING, attempt=1,
        counts=RunCounts(), pressure=0.0, pending=[],
    )  # fmt: skip


def test_lines_read_in_one_poll_come_in_time_order_not_in_the_order_recorded() -> None:
    view = Lines()
    # recorded as they arrived: b's retry is recorded when its call ended, stamped when it began
    view.page(
        _page(
            _event(TraceKind.NODE_START, 0.1, "a"),
            _event(TraceKind.NODE_FINISH, 2, "a"),
            _event(TraceKind.NODE_RETRY, 1, "b"),
            _event(TraceKind.NODE_FINISH, 3, "b"),
        )
    )
    shown = [(line.split()[1], line.split()[2]) for line in view.lines]
    assert shown == [
        ("node.start", "a"), ("node.retry", "b"), ("node.finish", "a"), ("node.finish", "b")
    ]  # fmt: skip
    offsets = [float(line.split()[0].rstrip("s")) for line in view.lines]
    assert offsets == sorted(offsets)
