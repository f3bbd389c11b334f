"""The patches of the task entity (HarnessTask): asked per act, numbered by the ledger where
the registry says `numbered`; see the registry, workflows.patches."""

from __future__ import annotations

from datetime import date

from workflows.patches.patch import Patch

CONTRACT_PATCH = "task-contract-v1"
"""Completions (and approvals by a system) ask the scope's contract in force, through an
activity; tasks before it were judged by the built-in gates alone."""
IDENTITY_PATCH = "governance-actor-identity"
"""0.10: actors compared as one identity however spelt, and the agent's rights as the README
lists them. Asked only where the old gateway and the new one answer differently, numbered by
the ledger like CONTRACT_PATCH, so a history from before decides as it did."""
KEYS_READ_PATCH = "task-reads-its-scope-keys"
"""0.10: told its scope's actor keys changed, a task reads them (an activity, so history holds
what it checks signatures by). No history before 0.10 holds the signal."""
FENCE_PATCH = "task-fences-stale-writers"
"""0.10: a write that carries a writer's fence raises its holder's mark in the task's ledger,
so a later write of an older epoch is refused (harness.governance.fencing). Asked only for a
fenced write: no history recorded before holds one."""

PATCHES: tuple[Patch, ...] = (
    Patch(
        CONTRACT_PATCH,
        date(2026, 12, 1),
        "ebd4108",
        "0.4.0",
        "A task's completions and system approvals ask the scope's contract in force, through "
        "an activity; before, the built-in gates alone judged them.",
        numbered=True,
    ),
    Patch(
        IDENTITY_PATCH,
        date(2026, 12, 3),
        "e899a83",
        "0.9.0",
        "A task's gateway compares actors as one identity however spelt, with the agent's "
        "rights as documented (human:Alice approved human:alice's submission).",
        numbered=True,
    ),
    Patch(
        KEYS_READ_PATCH,
        date(2026, 12, 3),
        "5f16958",
        "0.10.0",
        "A task told that its scope's actor keys changed reads them through an activity.",
    ),
    Patch(
        FENCE_PATCH,
        date(2026, 12, 4),
        "d4af83b",
        "0.10.0",
        "A task keeps the highest epoch each fenced writer has written with, and refuses a "
        "write of an older one: a session's superseded slice writes no more.",
    ),
)
