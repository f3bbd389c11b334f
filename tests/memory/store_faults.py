"""Real ways a SQLite memory store fails under a running worker, for the tests and the recorded
histories: its file overwritten with junk, and a lock held by another connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

JUNK = b"not a database. " * 256


@contextmanager
def corrupted(path: Path) -> Iterator[None]:
    """memory.db and its WAL companions overwritten in place with junk, as a stray copy would
    (the worker's open connection sees "file is not a database" at its next statement).
    Overwriting only memory.db is not enough: the connection would go on from its cache."""
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        part = path.parent / name
        if part.exists():
            size = max(part.stat().st_size, len(JUNK))
            with part.open("r+b") as out:
                out.write((JUNK * (size // len(JUNK) + 1))[:size])
    yield


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Another connection holds the file's write lock (`BEGIN EXCLUSIVE`) until the block ends:
    in WAL mode reads go on, writes wait for the store's busy timeout and fail."""
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        yield
        holder.execute("ROLLBACK")
    finally:
        holder.close()
