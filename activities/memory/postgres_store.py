"""The memory store in Postgres: one database for a cluster of workers."""

from __future__ import annotations

import threading
from typing import Any

import psycopg

from activities.memory.store import StoreError, refuse_empty, storable
from harness.memory_records import STORED, MemoryFilter, MemoryRecord

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
        try:
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=10)
            with self._db.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_lock(7201601)")  # one schema creator at once
                cursor.execute(_SCHEMA)
                cursor.execute("SELECT pg_advisory_unlock(7201601)")
        except psycopg.Error as error:
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
            raise StoreError(
                f"the memory store {self.location} cannot be opened: {reason}"
            ) from None
        self._lock = threading.Lock()

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
        clause, values = _where(where)
        sql = f"SELECT body::text FROM harness_memories{clause} ORDER BY at DESC, id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [
            MemoryRecord.model_validate_json(row[0], context=STORED)
            for row in self._run(sql, values)
        ]

    def forget(self, where: MemoryFilter) -> int:
        refuse_empty(where)
        clause, values = _where(where)
        with self._lock, self._db.cursor() as cursor:
            cursor.execute(f"DELETE FROM harness_memories{clause}", values)
            return cursor.rowcount

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _run(self, sql: str, values: list[Any]) -> list[tuple[Any, ...]]:
        with self._lock, self._db.cursor() as cursor:
            cursor.execute(sql, values)
            return cursor.fetchall() if cursor.description else []


def _where(where: MemoryFilter) -> tuple[str, list[str]]:
    terms, values = [], []
    for column, value in (
        ("id", where.id),
        ("scope", where.scope),
        ("session_id", where.session_id),
        ("tier", where.tier.value if where.tier else None),
    ):
        if value is not None:
            terms.append(f"{column} = %s")
            values.append(value)
    return (" WHERE " + " AND ".join(terms) if terms else ""), values


def _without_password(url: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info.pop("password", None)
    host, port, name = info.get("host", "localhost"), info.get("port", "5432"), info.get("dbname")
    return f"postgresql://{info.get('user', '')}@{host}:{port}/{name or ''}"
