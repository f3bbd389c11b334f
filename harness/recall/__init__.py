"""Memory: what the memory store holds and is asked (records, scoped), and the planner's
memory context assembled under a character budget. The store itself is the top-level `memory/`.

May import `harness.core` only. A run's episode is written by `harness.engine.episodes`.
"""
