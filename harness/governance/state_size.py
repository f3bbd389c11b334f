"""What an entity workflow carries, in bytes, and the checks that keep it inside its bound.

A task's ledger, a scope's graph and its rules live in workflow state that continue-as-new
carries whole as one payload; Temporal refuses a payload past 2 MB, and a continue-as-new it
refuses is retried forever (the workflow wedges). A count of records cannot bound that, since a
record's size varies tenfold, so each gateway measures its state as the JSON it is sent as and
refuses the command that would take it past its bound, about half the payload limit.

Measuring the whole state on every command would cost milliseconds at a megabyte, so a gateway
measures it once (when first asked, never on replay) and then adds what each applied command
changed: the records it appended and the records it changed, measured before and after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from pydantic import BaseModel
from pydantic_core import to_json

from harness.core.actors import ActorKind, parse_actor
from harness.core.limits import MAX_ACTOR_CHARS

SEPARATOR: Final = 1
"""A comma between two items of a list or two entries of a map."""
COLON: Final = 1
RECORD_OVERHEAD_BYTES: Final = 512
"""The field names, id and timestamps a record adds to what its command says (a fact's are
about 250 bytes); tests/harness/test_state_size.py holds every command to its estimate."""
KEY_ENTRY_BYTES: Final = 128
"""An idempotency key's two entries besides the key itself: a SHA-256 and a record id."""


def json_bytes(value: object) -> int:
    """Bytes of `value` as JSON (UTF-8), as the data converter sends it."""
    if isinstance(value, BaseModel):
        return len(value.model_dump_json().encode())
    return len(to_json(value))


def actor_problem(actor: str) -> str | None:
    """The one check of an actor every gateway makes: its form and its length."""
    if len(actor) > MAX_ACTOR_CHARS:
        return f"actor: at most {MAX_ACTOR_CHARS:,} characters, not {len(actor):,}"
    try:
        parse_actor(actor)
    except ValueError as error:
        return str(error)
    return None


def actor_kind(actor: str) -> ActorKind:
    """The kind of an actor `actor_problem` passed."""
    return parse_actor(actor)[0]


def names_problem(names: Mapping[str, str | None], limit: int) -> str | None:
    """The first of `names` (field -> value) longer than `limit` characters, said as such."""
    for field, value in names.items():
        if value is not None and len(value) > limit:
            return f"{field}: at most {limit:,} characters, not {len(value):,}"
    return None


class Tally:
    """Bytes of a state as JSON, measured once and then kept exact change by change.

    `measure` says what the whole state takes (called when first asked: a workflow replaying
    its history never pays for it). Around each change, `changing(...)` notes the records that
    may change in place and the lists and maps that may grow; `changed()` adds the difference.
    A change that replaces what it cannot name is followed by `forget()`: measured again."""

    def __init__(self, measure: Callable[[], int]) -> None:
        self._measure = measure
        self._bytes: int | None = None
        self._touched: list[tuple[BaseModel, int]] = []
        self._lists: list[tuple[Sequence[BaseModel], int]] = []
        self._maps: list[tuple[Mapping[str, object], set[str]]] = []

    @property
    def bytes(self) -> int:
        if self._bytes is None:
            self._bytes = self._measure()
        return self._bytes

    def forget(self) -> None:
        self._bytes = None

    def add(self, growth: int) -> None:
        """A change its caller measured itself (what it changes in place without a record)."""
        if self._bytes is not None:
            self._bytes += growth

    def changing(
        self,
        touched: Iterable[BaseModel] = (),
        lists: Iterable[Sequence[BaseModel]] = (),
        maps: Iterable[Mapping[str, object]] = (),
    ) -> None:
        if self._bytes is None:  # not measured yet: it will be, whole, when first asked
            return
        self._touched = [(record, json_bytes(record)) for record in touched]
        self._lists = [(items, len(items)) for items in lists]
        self._maps = [(entries, set(entries)) for entries in maps]

    def changed(self) -> None:
        if self._bytes is None:
            return
        growth = sum(json_bytes(record) - before for record, before in self._touched)
        for items, length in self._lists:
            growth += _appended(length, [json_bytes(item) for item in items[length:]])
        for entries, keys in self._maps:
            added = [
                json_bytes(key) + COLON + json_bytes(value)
                for key, value in entries.items()
                if key not in keys
            ]
            growth += _appended(len(keys), added)
        self._bytes += growth
        self._touched, self._lists, self._maps = [], [], []


def _appended(before: int, sizes: list[int]) -> int:
    """What items of these sizes add to a list (or map) of `before` items: each after the
    first of all is led by a comma."""
    return sum(sizes) + SEPARATOR * (len(sizes) - (0 if before else min(len(sizes), 1)))


def growth_estimate(command: BaseModel, key: str | None, extra: int = 0) -> int:
    """At most what applying `command` adds to a state: the command itself (every field it
    stores, the actor among them), the names and stamps of the record it makes, its key twice
    with the content and the record it stands for, and `extra` for what the command does not
    spell out."""
    keyed = 2 * json_bytes(key) + KEY_ENTRY_BYTES if key is not None else 0
    return json_bytes(command) + RECORD_OVERHEAD_BYTES + keyed + extra
