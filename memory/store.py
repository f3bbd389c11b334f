"""The memory store's one interface, shared by every worker and the CLI.

Two implementations pass the same contract tests: SQLite in the state directory (the default:
nothing to install, safe for several workers on one machine) and Postgres (for a cluster).
Writes are upserts by id, so an activity retried after a lost reply writes nothing twice.
"""

from __future__ import annotations

from typing import Protocol

from harness.recall.memory_records import MemoryFilter, MemoryRecord


class StoreError(RuntimeError):
    """The store cannot be opened or used; the message says which and why."""


class StoreConfigError(StoreError):
    """The store's address cannot be one: bad input, not an outage."""


class MemoryStore(Protocol):
    location: str
    """Where the memories are, without any password: a path or a database URL."""

    def put(self, record: MemoryRecord) -> None:
        """Write the record, replacing one with the same id."""

    def get(self, memory_id: str) -> MemoryRecord | None: ...

    def select(self, where: MemoryFilter, limit: int | None = None) -> list[MemoryRecord]:
        """Matching records, newest first (then by id)."""

    def forget(self, where: MemoryFilter) -> int:
        """Delete what the filter names and nothing else; refuses an empty filter."""

    def close(self) -> None: ...


def storable(record: MemoryRecord) -> MemoryRecord:
    """The record validated again, so its redaction holds however it was built (a
    `model_copy(update=...)` skips validators)."""
    return MemoryRecord.model_validate(record.model_dump())


def refuse_empty(where: MemoryFilter) -> None:
    if where.is_empty():
        raise StoreError("forget needs an id, a session or a scope: it never forgets everything")


def where_clause(where: MemoryFilter, placeholder: str) -> tuple[str, list[str]]:
    """` WHERE col = ? AND ...` for the filter's fields (no text of the filter in the SQL),
    with the driver's placeholder, and the values in order."""
    terms, values = [], []
    for column, value in (
        ("id", where.id),
        ("scope", where.scope),
        ("session_id", where.session_id),
        ("tier", where.tier.value if where.tier else None),
    ):
        if value is not None:
            terms.append(f"{column} = {placeholder}")
            values.append(value)
    return (" WHERE " + " AND ".join(terms) if terms else ""), values
