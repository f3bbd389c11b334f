"""The memory store every worker and the CLI share: episodes and facts behind one interface
(SQLite by default, Postgres for a cluster), their ranking (BM25, Jaccard, embeddings), and
retrieval. The activities that use it are in `activities.memory`; the models are in `harness`.
Its own package, not part of `activities`, because the CLI reads and prunes the store too."""

from memory.opening import open_store
from memory.store import MemoryStore, StoreError

__all__ = ["MemoryStore", "StoreError", "open_store"]
