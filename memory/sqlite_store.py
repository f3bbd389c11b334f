"""The memory store in one SQLite file: the default, in the state directory."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.recall.memory_records import STORED, MemoryFilter, MemoryRecord
from memory.store import StoreError, refuse_empty, storable, where_clause

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    tier TEXT NOT NULL,
    scope TEXT NOT NULL,
    session_id TEXT,
    at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_scope ON memories (scope, at);
CREATE INDEX IF NOT EXISTS memories_session ON memories (session_id);
"""


BUSY_SECONDS = 5.0
"""How long a write waits for another connection's lock before it fails "database is locked":
ample for the short upserts of workers sharing the file, and well inside the time a run gives
a memory call (workflows.activity_calls.stores.MEMORY_PATIENCE), so a locked store fails as
itself and is retried, instead of timing out with the thread still waiting."""


class SqliteMemoryStore:
    """WAL mode and a busy timeout let several workers on one machine share the file."""

    def __init__(self, path: Path, busy_seconds: float = BUSY_SECONDS) -> None:
        self.location = str(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=busy_seconds, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA busy_timeout={int(busy_seconds * 1000)}")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"the memory store {path} cannot be opened: {error}") from error
        self._lock = threading.Lock()

    @contextmanager
    def _using(self) -> Iterator[sqlite3.Connection]:
        """The connection, one caller at a time; a failure is a StoreError that says where."""
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as error:
                raise StoreError(f"the memory store {self.location} failed: {error}") from None

    def put(self, record: MemoryRecord) -> None:
        record = storable(record)
        with self._using(), self._db:
            self._db.execute(
                "INSERT INTO memories (id, tier, scope, session_id, at, body) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET tier = excluded.tier, "
                "scope = excluded.scope, session_id = excluded.session_id, at = excluded.at, "
                "body = excluded.body",
                (
                    record.id,
                    record.tier.value,
                    record.scope,
                    record.session_id,
                    record.at.isoformat(),
                    record.model_dump_json(),
                ),
            )

    def get(self, memory_id: str) -> MemoryRecord | None:
        with self._using():
            row = self._db.execute(
                "SELECT body FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
        return MemoryRecord.model_validate_json(row[0], context=STORED) if row else None

    def select(self, where: MemoryFilter, limit: int | None = None) -> list[MemoryRecord]:
        clause, values = where_clause(where, "?")
        sql = f"SELECT body FROM memories{clause} ORDER BY at DESC, id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        with self._using():
            rows = self._db.execute(sql, values).fetchall()
        return [MemoryRecord.model_validate_json(row[0], context=STORED) for row in rows]

    def forget(self, where: MemoryFilter) -> int:
        refuse_empty(where)
        clause, values = where_clause(where, "?")
        with self._using(), self._db:
            return self._db.execute(f"DELETE FROM memories{clause}", values).rowcount

    def close(self) -> None:
        with self._lock:
            self._db.close()
