"""The memory store's backends for the contract tests: SQLite, and a real Postgres cluster
(one database per test, so each starts empty)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from memory.postgres_store import PostgresMemoryStore
from memory.sqlite_store import SqliteMemoryStore
from memory.store import MemoryStore


@pytest.fixture
def postgres_database(postgres_url: str) -> str:
    """A new, empty database of the session's cluster."""
    name = f"memory_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return postgres_url.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    opened: MemoryStore
    if request.param == "sqlite":
        opened = SqliteMemoryStore(tmp_path / "memory.db")
    else:
        opened = PostgresMemoryStore(request.getfixturevalue("postgres_database"))
    yield opened
    opened.close()
