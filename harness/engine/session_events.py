"""A session's events, as a follower sees them (`GET /sessions/ID/events`): read from the
session's state (its query), never from its history, so following adds nothing to it.

Each state has a *mark*, `MESSAGES.EPOCH.PHASE`: the messages it took, the slice it is at, and
how far that slice got (PHASE: 0 none ran, 1 the slice began, 2 it replied, 3 its reply opened
a wait, 4 the wait was answered). A session only moves forward: it takes a message (MESSAGES
grows), begins a slice (EPOCH grows, PHASE 1), replies (2), opens a wait (3), has it answered
(4), begins the next slice; so marks, compared as numbers left to right, only grow. Each event
carries the mark of the state just after it as its SSE `id:`, and `session_events(after, state)`
gives the events between the mark `after` (a reconnect's `Last-Event-ID`) and the state: none
that was sent before, and never one twice.

A state is what the query answers now: a follower that was away sees the newest message and
the current slice's events, not every slice it missed (the history keeps those). A session
started anew after it ended counts from 0 again: a mark from its earlier life, higher than the
state's, starts the follower from 0.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import NamedTuple

from pydantic import JsonValue

from harness.engine.sessions import SessionReply, SessionState, SessionStatus
from harness.waits.wait_book import WaitStatus


class SessionPhase(IntEnum):
    """How far the session's current slice got."""

    NONE = 0
    SLICE = 1
    REPLY = 2
    WAIT_OPENED = 3
    WAIT_ANSWERED = 4


class SessionEventKind(StrEnum):
    MESSAGE = "message"  # a message was taken: {messages, text: the newest text sent}
    SLICE = "slice"  # a slice began: {epoch}
    REPLY = "reply"  # the slice's reply (SessionReply): DONE, WAITING, CONTINUATION_REQUIRED
    WAIT_OPENED = "wait_opened"  # the wait the reply names (Wait)
    WAIT_ANSWERED = "wait_answered"  # that wait, answered or approved (Wait)


class SessionMark(NamedTuple):
    messages: int
    epoch: int
    phase: int

    def __str__(self) -> str:
        return f"{self.messages}.{self.epoch}.{self.phase}"

    @classmethod
    def parse(cls, text: str) -> SessionMark:
        """A mark as `str` writes it; ValueError for anything else."""
        parts = text.strip().split(".")
        if len(parts) != 3 or not all(part.isdigit() for part in parts):
            raise ValueError(f"{text!r} is not a session event id (MESSAGES.EPOCH.PHASE)")
        messages, epoch, phase = (int(part) for part in parts)
        if phase > max(SessionPhase):
            raise ValueError(f"{text!r}: its phase is 0 to {max(SessionPhase)}")
        return cls(messages, epoch, phase)


START = SessionMark(0, 0, 0)
"""Before anything: a follower with no `Last-Event-ID` gets the state's events from here."""


class SessionEvent(NamedTuple):
    mark: SessionMark
    kind: SessionEventKind
    data: JsonValue


def phase_of(state: SessionState) -> SessionPhase:
    if state.epoch == 0:
        return SessionPhase.NONE
    wait = state.wait
    if wait is not None and wait.status is not WaitStatus.PENDING:
        return SessionPhase.WAIT_ANSWERED
    last = state.last
    if last is None or last.epoch != state.epoch or _running(last):
        return SessionPhase.SLICE
    if last.status is SessionStatus.WAITING and state.parked() is not None:
        return SessionPhase.WAIT_OPENED
    return SessionPhase.REPLY


def mark_of(state: SessionState) -> SessionMark:
    return SessionMark(state.messages, state.epoch, phase_of(state))


def session_events(after: SessionMark, state: SessionState) -> list[SessionEvent]:
    """The events from the mark `after` to `state`, in order, each with its mark."""
    now = mark_of(state)
    if now <= after:
        if now < after and (now.messages, now.epoch) < (after.messages, after.epoch):
            return session_events(START, state)  # a new life of the session
        return []
    events: list[SessionEvent] = []
    if now.messages > after.messages:
        after = SessionMark(now.messages, after.epoch, after.phase)
        data: JsonValue = {"messages": now.messages, "text": state.asked}
        events.append(SessionEvent(after, SessionEventKind.MESSAGE, data))
    for phase in map(SessionPhase, range(SessionPhase.SLICE, now.phase + 1)):
        mark = SessionMark(now.messages, now.epoch, phase)
        if mark > after:
            events.append(SessionEvent(mark, _KINDS[phase], _data(phase, state)))
    return events


_KINDS = {
    SessionPhase.SLICE: SessionEventKind.SLICE,
    SessionPhase.REPLY: SessionEventKind.REPLY,
    SessionPhase.WAIT_OPENED: SessionEventKind.WAIT_OPENED,
    SessionPhase.WAIT_ANSWERED: SessionEventKind.WAIT_ANSWERED,
}


def _data(phase: SessionPhase, state: SessionState) -> JsonValue:
    if phase is SessionPhase.SLICE:
        return {"epoch": state.epoch}
    if phase is SessionPhase.REPLY:
        assert state.last is not None
        reply: JsonValue = state.last.model_dump(mode="json")
        return reply
    assert state.wait is not None
    wait: JsonValue = state.wait.model_dump(mode="json")
    return wait


def _running(last: SessionReply) -> bool:
    """The reply a slice shows while it runs (or after it failed): no turns, no answer, and a
    note (a slice's own CONTINUATION_REQUIRED has none)."""
    return (
        last.status is SessionStatus.CONTINUATION_REQUIRED
        and last.note is not None
        and last.answer is None
        and last.turns == 0
    )
