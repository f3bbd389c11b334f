"""Memory: the store of episodes and facts, their ranking, and the activities that write
episodes and retrieve what the planner sees."""

from activities.memory.opening import open_store
from activities.memory.store import MemoryStore, StoreError

__all__ = ["MemoryStore", "StoreError", "open_store"]
