"""The patches of the run's waits and the messages that answer them (approvals, answers,
deliveries, reconciles, cancels): who may answer, where an early delivery parks, what a late one
does. Each is asked in the run's first workflow task unless its note says otherwise; see the
registry, workflows.patches."""

from __future__ import annotations

from datetime import date

from workflows.patches.patch import Patch

CANCEL_BEFORE_START_PATCH = "cancel-before-start-is-kept"
QUIET_CANCEL_PATCH = "cancel-without-waits-publishes-nothing"
DELIVERY_RULES_PATCH = "delivery-rules-v2"
RECONCILE_RULES_PATCH = "delivery-rules-v3"
LATE_RESULT_RECONCILES_PATCH = "late-side-effect-result-reconciles"
DELIVERY_BOUNDS_PATCH = "delivery-bounds-on-signals"
AGENT_RECONCILE_PATCH = "delivery-rules-v4"
SIGNED_ANSWERS_PATCH = "keyed-runs-take-only-signed-answers"
APPROVAL_COVERS_PATCH = "an-approval-covers-its-action-across-replans"
"""Asked mid-run where a cover exists, perhaps right after a local activity: a marker that may
land in another workflow task live than on replay (see activity_calls.placement.llm_queue).
Kept for the runs that asked it; runs since APPROVAL_COVERS_AT_START_PATCH do not."""
APPROVAL_COVERS_AT_START_PATCH = "approval-covers-decided-at-start"
"""Covers apply: decided in the run's first workflow task with the run's other patches
(workflows.agent_run), carried as ExecutionOptions.approval_covers."""
KNOWN_OUTCOMES_PATCH = "operations-started-again-take-their-known-outcome"
"""Decided in the run's first workflow task, carried as ExecutionOptions.known_outcomes."""
EARLY_SIGNALS_PATCH = "signals-before-the-rules-wait-for-them"
"""0.10: a signal that reaches the run before `run` has decided its rules (one sent with the
start, or in its first task) waits for them: it was applied under the oldest rules, e.g. an
unsigned cancel by another spelling of a keyed actor was taken."""
SIGNAL_CANCEL_PATCH = "cancel-signal-ends-canceled"
EARLY_LOTS_PATCH = "early-deliveries-parked-by-sender"
LATE_TRACE_PATCH = "late-deliveries-traced-as-late"
ACTOR_IDENTITY_PATCH = "actors-one-identity-however-spelt"
"""0.10: a keyed actor is found in any spelling (case, Unicode forms, invisible characters)."""

PATCHES: tuple[Patch, ...] = (
    Patch(
        CANCEL_BEFORE_START_PATCH,
        date(2026, 12, 1),
        "f396dcf",
        "0.1.0",
        "A cancel signalled with the start (before the run's first task) is kept: the run ends "
        "CANCELLED instead of planning.",
    ),
    Patch(
        QUIET_CANCEL_PATCH,
        date(2026, 12, 1),
        "f396dcf",
        "0.1.0",
        "Cancelling pending waits when there are none publishes nothing (no search-attribute "
        "upsert).",
    ),
    Patch(
        DELIVERY_RULES_PATCH,
        date(2026, 12, 1),
        "7a49faa",
        "0.2.0",
        "Early deliveries park in a bounded lot per kind that lets its oldest go (100 junk "
        "results no longer refuse the real one), and a result finds its pending wait first "
        "(DeliveryRules.bounded_parking).",
    ),
    Patch(
        RECONCILE_RULES_PATCH,
        date(2026, 12, 1),
        "b4f6761",
        "0.2.0",
        'A reconcile says "succeeded" with the result, or "failed"; nothing else '
        "(DeliveryRules.reconcile_states_outcome).",
    ),
    Patch(
        LATE_RESULT_RECONCILES_PATCH,
        date(2026, 12, 1),
        "b4f6761",
        "0.2.0",
        "A side effect whose result comes after its wait expired is reconciled by a person or "
        "a system instead of failing the node as if nothing happened.",
    ),
    Patch(
        DELIVERY_BOUNDS_PATCH,
        date(2026, 12, 1),
        "e988c85",
        "0.2.0",
        "The signal handlers refuse an out-of-range delivery (updates reject it in their "
        "validator) instead of failing the workflow task on every replay.",
    ),
    Patch(
        AGENT_RECONCILE_PATCH,
        date(2026, 12, 1),
        "ad44823",
        "0.4.0",
        "An agent never reconciles a side effect: only a person or a system says what it did "
        "(DeliveryRules.agents_never_reconcile).",
    ),
    Patch(
        SIGNED_ANSWERS_PATCH,
        date(2026, 12, 3),
        "5279250",
        "0.9.0",
        "A run with actor keys takes an answer only when a keyed actor signed it.",
    ),
    Patch(
        APPROVAL_COVERS_PATCH,
        date(2026, 12, 3),
        "a4de17f",
        "0.9.0",
        "An approval covers its action (same tool, same canonical arguments) across replans; "
        "asked mid-run, superseded by APPROVAL_COVERS_AT_START_PATCH.",
    ),
    Patch(
        SIGNAL_CANCEL_PATCH,
        date(2026, 12, 3),
        "2ef24d5",
        "0.9.0",
        "The cancel signal ends a run Canceled in Temporal too (it ended Completed with a "
        "CANCELLED result).",
    ),
    Patch(
        EARLY_LOTS_PATCH,
        date(2026, 12, 3),
        "95e06b7",
        "0.9.0",
        "Early deliveries park in lots by sender, and a keyed run parks only signed ones: one "
        "sender's junk evicted another's real result (DeliveryRules.lots_by_sender).",
    ),
    Patch(
        LATE_TRACE_PATCH,
        date(2026, 12, 3),
        "95e06b7",
        "0.9.0",
        "A delivery to a closed wait is traced as late, with an excerpt of what it said.",
    ),
    Patch(
        ACTOR_IDENTITY_PATCH,
        date(2026, 12, 3),
        "e899a83",
        "0.9.0",
        "A run tells actors by one identity however spelt (keys, early lots): an unsigned "
        "cancel as Human:Ops was taken where human:ops had a key "
        "(DeliveryRules.senders_by_identity).",
    ),
    Patch(
        APPROVAL_COVERS_AT_START_PATCH,
        date(2026, 12, 3),
        "b24d04a",
        "0.10.0",
        "Whether approvals cover their action across replans is decided in the run's first "
        "workflow task, so its marker lands in the same task live and on replay.",
    ),
    Patch(
        KNOWN_OUTCOMES_PATCH,
        date(2026, 12, 3),
        "8a1096c",
        "0.10.0",
        "An operation a replan starts again (the same operation id) takes the outcome an "
        "earlier attempt was delivered; a repeated report could come before the new wait "
        "opened and count as a duplicate of the old one.",
    ),
    Patch(
        EARLY_SIGNALS_PATCH,
        date(2026, 12, 3),
        "9b17b68",
        "0.10.0",
        "Signals that reach a run before it has decided its rules wait for them; a cancel sent "
        "with the start was judged by the oldest rules.",
    ),
)
