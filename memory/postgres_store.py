"""The memory store in Postgres: one database for a cluster of workers.

One connection per store, made again when the server dropped it (a restart costs the calls in
flight, not the worker); every statement has a timeout, so a hung database cannot hold a worker.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg

from harness.recall.memory_records import STORED, MemoryFilter, MemoryRecord
from memory.store import (
    StoreConfigError,
    StoreError,
    refuse_empty,
    storable,
    where_clause,
)

STATEMENT_TIMEOUT_MS = 10_000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS harness_memories (
    id TEXT PRIMARY KEY,
    tier TEXT NOT NULL,
    scope TEXT NOT NULL,
    session_id TEXT,
    at TIMESTAMPTZ NOT NULL,
    body JSONB NOT NULL
);
CREATE INDEX IF NOT EXISTS harness_memories_scope ON harness_memories (scope, at);
CREATE INDEX IF NOT EXISTS harness_memories_session ON harness_memories (session_id);
"""


class PostgresMemoryStore:
    def __init__(self, url: str) -> None:
        self.location = _without_password(url)
        self._url = url
        self._lock = threading.Lock()
        self._db = self._connect()
        self._run("SELECT pg_advisory_lock(7201601)", [])  # one schema creator at once
        try:
            self._run(_SCHEMA, [])
        finally:
            self._run("SELECT pg_advisory_unlock(7201601)", [])

    def put(self, record: MemoryRecord) -> None:
        record = storable(record)
        self._run(
            "INSERT INTO harness_memories (id, tier, scope, session_id, at, body) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET tier = excluded.tier, "
            "scope = excluded.scope, session_id = excluded.session_id, at = excluded.at, "
            "body = excluded.body",
            [
                record.id,
                record.tier.value,
                record.scope,
                record.session_id,
                record.at,
                record.model_dump_json(),
            ],
        )

    def get(self, memory_id: str) -> MemoryRecord | None:
        rows = self._run("SELECT body::text FROM harness_memories WHERE id = %s", [memory_id])
        return MemoryRecord.model_validate_json(rows[0][0], context=STORED) if rows else None

    def select(self, where: MemoryFilter, limit: int | None = None) -> list[MemoryRecord]:
        clause, values = where_clause(where, "%s")
        sql = f"SELECT body::text FROM harness_memories{clause} ORDER BY at DESC, id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self._run(sql, values)
        return [MemoryRecord.model_validate_json(row[0], context=STORED) for row in rows]

    def forget(self, where: MemoryFilter) -> int:
        refuse_empty(where)
        clause, values = where_clause(where, "%s")
        rows = self._run(f"WITH gone AS (DELETE FROM harness_memories{clause} RETURNING 1) "
                         "SELECT count(*) FROM gone", values)  # fmt: skip
        return int(rows[0][0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(
                self._url,
                autocommit=True,
                connect_timeout=10,
                options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}",
            )
        except psycopg.Error as error:
            raise StoreError(f"the memory store {self.location} cannot be opened: "
                             f"{_first_line(error)}") from None  # fmt: skip

    def _run(self, sql: str, values: list[Any]) -> list[tuple[Any, ...]]:
        """One statement; a connection the server dropped is made again, once."""
        with self._lock:
            for attempt in (1, 2):
                if self._db.closed:
                    self._db = self._connect()
                try:
                    with self._db.cursor() as cursor:
                        cursor.execute(sql, values)
                        return cursor.fetchall() if cursor.description else []
                except psycopg.OperationalError as error:
                    if attempt == 2 or not self._db.closed:
                        raise StoreError(f"the memory store {self.location} failed: "
                                         f"{_first_line(error)}") from None  # fmt: skip
                except psycopg.Error as error:
                    raise StoreError(f"the memory store {self.location} failed: "
                                     f"{_first_line(error)}") from None  # fmt: skip
        raise AssertionError("unreachable")


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _without_password(url: str) -> str:
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as error:
        reason = _first_line(error)
        raise StoreConfigError(f"HARNESS_MEMORY_URL is not a Postgres URL: {reason}") from None
    host, port, name = info.get("host", "localhost"), info.get("port", "5432"), info.get("dbname")
    return f"postgresql://{info.get('user', '')}@{host}:{port}/{name or ''}"
