"""Which store a worker or the CLI opens: HARNESS_MEMORY_URL, or SQLite in the state directory."""

from __future__ import annotations

from pathlib import Path

from memory.store import MemoryStore, StoreConfigError

MEMORY_FILE = "memory.db"


def open_store(url: str | None, state_dir: Path) -> MemoryStore:
    """`postgresql://...` opens Postgres; `sqlite:///PATH` (or nothing) a SQLite file."""
    if not url or url.startswith("sqlite:///"):
        from memory.sqlite_store import SqliteMemoryStore

        path = Path(url.removeprefix("sqlite:///")) if url else state_dir / MEMORY_FILE
        return SqliteMemoryStore(path)
    if url.startswith(("postgresql://", "postgres://")):
        from memory.postgres_store import PostgresMemoryStore

        return PostgresMemoryStore(url)
    raise StoreConfigError(
        "HARNESS_MEMORY_URL must be postgresql://USER@HOST:PORT/DB or sqlite:///PATH, "
        f"not {url.split('://')[0]}://…"
    )
