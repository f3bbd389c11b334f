"""A session's events as a follower sees them, derived from its states: each once, in order,
with marks that only grow, and a reconnect from any mark gets only what came after it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from harness.engine.session_events import (
    START,
    SessionEventKind,
    SessionMark,
    mark_of,
    session_events,
)
from harness.engine.sessions import PendingWait, SessionReply, SessionState, SessionStatus
from harness.waits.wait_book import Wait, WaitKind, WaitStatus

MESSAGE, SLICE, REPLY = SessionEventKind.MESSAGE, SessionEventKind.SLICE, SessionEventKind.REPLY
OPENED, ANSWERED = SessionEventKind.WAIT_OPENED, SessionEventKind.WAIT_ANSWERED
AT = datetime(2026, 12, 4, tzinfo=UTC)


def running(epoch: int) -> SessionReply:
    """What the session shows while slice `epoch` runs."""
    return SessionReply(
        session_id="s",
        status=SessionStatus.CONTINUATION_REQUIRED,
        epoch=epoch,
        note=f"slice {epoch} was cut short: --continue runs it again",
    )


def replied(epoch: int, status: SessionStatus = SessionStatus.DONE) -> SessionReply:
    answer = f"answer {epoch}" if status is SessionStatus.DONE else None
    return SessionReply(session_id="s", status=status, epoch=epoch, answer=answer, turns=2)


def question(status: WaitStatus = WaitStatus.PENDING) -> Wait:
    kind = WaitKind.USER_INPUT
    return Wait(id="question-2", kind=kind, prompt="Which year?", created_at=AT, status=status)


PENDING = PendingWait(call_id="c1", tool="ask_user", kind=WaitKind.USER_INPUT, prompt="Which year?")

LIFE: list[tuple[SessionState, list[SessionEventKind]]] = [
    (SessionState(), []),
    (SessionState(messages=1, asked="Hi", epoch=1, last=running(1)), [MESSAGE, SLICE]),
    (SessionState(messages=1, asked="Hi", epoch=1, last=replied(1)), [REPLY]),
    (SessionState(messages=2, asked="Ask", epoch=1, last=replied(1)), [MESSAGE]),
    (SessionState(messages=2, asked="Ask", epoch=2, last=running(2)), [SLICE]),
    (
        SessionState(
            messages=2,
            asked="Ask",
            epoch=2,
            last=replied(2, SessionStatus.WAITING),
            pending=PENDING,
            wait=question(),
        ),
        [REPLY, OPENED],
    ),
    (
        SessionState(
            messages=2,
            asked="Ask",
            epoch=2,
            last=replied(2, SessionStatus.WAITING),
            pending=PENDING,
            wait=question(WaitStatus.DELIVERED),
        ),
        [ANSWERED],
    ),
    (SessionState(messages=2, asked="Ask", epoch=3, last=running(3)), [SLICE]),
    (SessionState(messages=2, asked="Ask", epoch=3, last=replied(3)), [REPLY]),
]
"""A session's states as a follower polling it sees each, and the events each step adds."""


def test_a_follower_polling_every_state_gets_each_event_once_with_growing_marks() -> None:
    after, seen = START, []
    for state, expected in LIFE:
        events = session_events(after, state)
        assert [event.kind for event in events] == expected
        for event in events:
            assert event.mark > after
            after = event.mark
        assert after == mark_of(state) or not events
        seen.extend(events)
    assert [str(event.mark) for event in seen] == [
        "1.0.0",
        "1.1.1",
        "1.1.2",
        "2.1.2",
        "2.2.1",
        "2.2.2",
        "2.2.3",
        "2.2.4",
        "2.3.1",
        "2.3.2",
    ]


def test_a_follower_that_missed_states_gets_the_newest_message_and_the_current_slice() -> None:
    state = LIFE[5][0]  # the slice replied WAITING; the follower saw nothing since "1.1.2"
    events = session_events(SessionMark.parse("1.1.2"), state)
    assert [(event.kind, str(event.mark)) for event in events] == [
        (MESSAGE, "2.1.2"),
        (SLICE, "2.2.1"),
        (REPLY, "2.2.2"),
        (OPENED, "2.2.3"),
    ]
    assert events[0].data == {"messages": 2, "text": "Ask"}
    reply = events[2].data
    assert isinstance(reply, dict) and reply["status"] == "WAITING"
    wait = events[3].data
    assert isinstance(wait, dict) and wait["id"] == "question-2"


@pytest.mark.parametrize("index", range(len(LIFE)))
def test_a_reconnect_from_the_last_mark_it_got_repeats_nothing(index: int) -> None:
    state = LIFE[index][0]
    first = session_events(START, state)
    last = first[-1].mark if first else START
    assert session_events(last, state) == []
    assert session_events(SessionMark.parse(str(last)), state) == []


def test_a_mark_from_an_earlier_life_of_the_session_starts_from_the_beginning() -> None:
    new_life = SessionState(messages=1, asked="Again", epoch=1, last=replied(1))
    events = session_events(SessionMark.parse("7.9.2"), new_life)
    assert [event.kind for event in events] == [MESSAGE, SLICE, REPLY]


@pytest.mark.parametrize("text", ["", "1.2", "a.b.c", "1.2.9", "-1.0.0", "1.2.3.4"])
def test_an_id_that_is_no_mark_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"session event id|phase"):
        SessionMark.parse(text)
