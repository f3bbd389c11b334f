"""Work that outlives a run: tasks and their ledger's gateway, the task graph, the host's
contract for a scope, lessons and rules, completion gates and the size bounds of entity state.

May import `harness.core` and `harness.catalog` (a contract names tools), never the run.
"""
