"""Every `workflow.patched` id of the workflow code: one registry, each with when and why it came.

A patch id is written into a run's history (a MARKER_RECORDED event) the first time live code
asks `workflow.patched(id)`; on replay the answer is whether the history holds that marker, so a
run recorded before a change keeps its old path and a run started after takes the new one.
Which behaviour a history gets is decided here, in the workflow layer: the pure rules in
`harness/` take plain parameters (e.g. `harness.waits.wait_book.DeliveryRules`), chosen by the
workflow from these patches.

Adding a patch: add its constant and its `Patch` entry here, import the constant where it is
asked; tests/workflows/test_patches.py fails for an id asked but not registered, an entry never
asked, or a marker in a recorded history that no entry names. The lifecycle (patched ->
deprecate_patch -> removal, and when a recorded history may be retired) is in
docs/changing-workflow-code.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Patch:
    """One patch id. `added`, `commit`: the commit that added it (`git log -S'<id>' --reverse`;
    empty until that commit exists). `release`: the version pyproject.toml named then.
    `numbered`: asked as `<id>:<acceptances>:<reviews>`, once per act of a long-lived task (see
    task_entity), as well as (for CONTRACT_PATCH) bare."""

    id: str
    added: date
    commit: str
    release: str
    reason: str
    numbered: bool = False


# -- the run (AgentRunWorkflow): asked in its first workflow task unless said otherwise --------
BATCH_ID_PATCH = "batch-id-names-the-attempt"
CANCEL_BEFORE_START_PATCH = "cancel-before-start-is-kept"
QUIET_CANCEL_PATCH = "cancel-without-waits-publishes-nothing"
HALT_SKIPS_READY_PATCH = "halt-skips-ready-nodes"
ELAPSED_ON_DEMAND_PATCH = "budget-time-read-on-demand"
DELIVERY_RULES_PATCH = "delivery-rules-v2"
RECONCILE_RULES_PATCH = "delivery-rules-v3"
LATE_RESULT_RECONCILES_PATCH = "late-side-effect-result-reconciles"
LLM_QUEUE_PATCH = "llm-calls-on-their-own-queue"
REQUEST_BOUNDS_PATCH = "request-bounds-checked-at-start"
DELIVERY_BOUNDS_PATCH = "delivery-bounds-on-signals"
OUTCOME_STATUS_PATCH = "workflow-status-is-the-outcome"
AGENT_RECONCILE_PATCH = "delivery-rules-v4"
WORK_CONTRACT_PATCH = "held-to-scope-contract"
LOCAL_CONTRACT_READ_PATCH = "scope-contract-read-locally"
MEMORY_PATCH = "run-memory-v1"
ECONOMY_PATCH = "fallback-model-under-pressure"
GIVEN_PLAN_FINAL_PATCH = "given-plan-invalid-ends-the-run"
PARALLEL_BATCHES_PATCH = "child-batches-run-in-parallel"
CHEAP_GROUPS_PATCH = "cheap-calls-share-an-activity"
LOCAL_MEMORY_PATCH = "memory-calls-are-local"
ATTEMPTS_RESERVED_PATCH = "tool-attempts-reserved-from-the-budget"
BIG_PLAN_PATCH = "big-plans-span-workflow-tasks"
SIGNED_ANSWERS_PATCH = "keyed-runs-take-only-signed-answers"
APPROVAL_COVERS_PATCH = "an-approval-covers-its-action-across-replans"
"""Asked mid-run where a cover exists, perhaps right after a local activity: a marker that may
land in another workflow task live than on replay (see activity_calls.llm_queue). Kept for the
runs that asked it; runs since APPROVAL_COVERS_AT_START_PATCH do not."""
APPROVAL_COVERS_AT_START_PATCH = "approval-covers-decided-at-start"
"""Covers apply: decided in the run's first workflow task with the run's other patches
(workflows.agent_run), carried as ExecutionOptions.approval_covers."""
KNOWN_OUTCOMES_PATCH = "operations-started-again-take-their-known-outcome"
"""Decided in the run's first workflow task, carried as ExecutionOptions.known_outcomes."""
EARLY_SIGNALS_PATCH = "signals-before-the-rules-wait-for-them"
"""0.10: a signal that reaches the run before `run` has decided its rules (one sent with the
start, or in its first task) waits for them: it was applied under the oldest rules, e.g. an
unsigned cancel by another spelling of a keyed actor was taken."""
LOCAL_FAILURES_PATCH = "local-failures-are-activity-errors"
MEMORY_DEGRADES_PATCH = "memory-failures-degrade-within-bounds"
SIGNAL_CANCEL_PATCH = "cancel-signal-ends-canceled"
EARLY_LOTS_PATCH = "early-deliveries-parked-by-sender"
LATE_TRACE_PATCH = "late-deliveries-traced-as-late"
ACTOR_IDENTITY_PATCH = "actors-one-identity-however-spelt"
"""0.10: a keyed actor is found in any spelling (case, Unicode forms, invisible characters)."""

# -- the task entity (HarnessTask): asked per act, numbered by the ledger -----------------------
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

# -- the scope graph (HarnessScope) ------------------------------------------------------------
STATUS_READ_PATCH = "scope-reads-task-status"
"""0.10: a `task_status` signal is only the news: the graph takes the status the task's own
workflow holds, read by an activity (anyone could signal a task DONE and free its dependants).
Asked where the scope takes the signal."""
KEYS_TOLD_PATCH = "scope-tells-tasks-of-new-keys"
"""0.10: a scope whose actor keys change tells each unfinished task, which reads them (no
history before 0.10 holds a key change: asked where the scope sends its signals)."""


PATCHES: tuple[Patch, ...] = (
    Patch(
        BATCH_ID_PATCH,
        date(2026, 12, 1),
        "f396dcf",
        "0.1.0",
        "A child batch's workflow id names its attempt (`<run>-attempt-<n>-batch-<m>`), so a "
        "replan's batches never collide with the first attempt's.",
    ),
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
        HALT_SKIPS_READY_PATCH,
        date(2026, 12, 1),
        "08a56eb",
        "0.1.0",
        "After a FATAL halt that cancelled held nodes, nodes still waiting for a slot are "
        "skipped; before, they stayed ready and the run hung.",
    ),
    Patch(
        ELAPSED_ON_DEMAND_PATCH,
        date(2026, 12, 1),
        "08a56eb",
        "0.1.0",
        "Recovery and judge decisions read the elapsed time on demand; older runs decide with "
        "the time of their last trace event.",
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
        LLM_QUEUE_PATCH,
        date(2026, 12, 1),
        "3c67582",
        "0.2.0",
        "Planner, judge and writing tools run on the LLM task queue, under the server's "
        "activities-per-second limit.",
    ),
    Patch(
        REQUEST_BOUNDS_PATCH,
        date(2026, 12, 1),
        "e988c85",
        "0.2.0",
        "A run started by any client checks its request's bounds first and ends "
        "FAILED_VALIDATION with every problem.",
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
        OUTCOME_STATUS_PATCH,
        date(2026, 12, 1),
        "813a33b",
        "0.3.0",
        "The workflow's status is the run's outcome: a failed run ends Failed, a run cancelled "
        "through Temporal ends Canceled (every run ended Completed before).",
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
        WORK_CONTRACT_PATCH,
        date(2026, 12, 1),
        "ebd4108",
        "0.4.0",
        "A run in a scope is held to its scope's contract from its start.",
    ),
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
        LOCAL_CONTRACT_READ_PATCH,
        date(2026, 12, 1),
        "5bc2771",
        "0.5.0",
        "The run reads its scope's contract in a local activity: one marker instead of a "
        "task-queue round trip and three events.",
    ),
    Patch(
        MEMORY_PATCH,
        date(2026, 12, 1),
        "2e1bb3d",
        "0.6.0",
        "Runs remember: retrieval before planning and an episode at the end, through activities.",
    ),
    Patch(
        ECONOMY_PATCH,
        date(2026, 12, 1),
        "96bce01",
        "0.6.0",
        "Under budget pressure the planner and the writing tools switch to the fallback model "
        "and retrieval goes shallower.",
    ),
    Patch(
        GIVEN_PLAN_FINAL_PATCH,
        date(2026, 12, 1),
        "e185c0f",
        "0.6.0",
        "A plan the caller gives that fails validation ends the run FAILED_VALIDATION at once; "
        "it used to go to a planner that cannot plan and wait a day for an answer.",
    ),
    Patch(
        PARALLEL_BATCHES_PATCH,
        date(2026, 12, 2),
        "6495662",
        "0.8.0",
        "A wide plan's child batches start together and split the concurrency cap, instead of "
        "one after another holding every slot.",
    ),
    Patch(
        CHEAP_GROUPS_PATCH,
        date(2026, 12, 2),
        "efbeed1",
        "0.8.0",
        "Ready calls of cheap in-memory tools share one local activity (fan-out of 1,000 cheap "
        "leaves 3.15 s -> 1.67 s).",
    ),
    Patch(
        LOCAL_MEMORY_PATCH,
        date(2026, 12, 2),
        "2253d14",
        "0.8.0",
        "Memory retrieval and the episode are local activities: no task-queue round trip and "
        "workflow task each.",
    ),
    Patch(
        ATTEMPTS_RESERVED_PATCH,
        date(2026, 12, 3),
        "3ab7931",
        "0.9.0",
        "A tool call reserves its attempts from the tool-call budget when admitted (a run "
        "capped at 6 calls made 8), and each tool sets its own attempts, timeout and backoff.",
    ),
    Patch(
        BIG_PLAN_PATCH,
        date(2026, 12, 3),
        "53f6c3c",
        "0.9.0",
        "A wide plan is validated in a local activity and its child batches start one per "
        "workflow task: a 20,000-node plan failed its first task in the deadlock detector.",
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
        LOCAL_FAILURES_PATCH,
        date(2026, 12, 3),
        "75b3dc9",
        "0.9.0",
        "Every local activity's failure reaches its caller as an ActivityError (the SDK raised "
        "some bare, which failed the workflow).",
    ),
    Patch(
        MEMORY_DEGRADES_PATCH,
        date(2026, 12, 3),
        "5c6b786",
        "0.9.0",
        "A failing memory store (down, corrupt, locked, slow) costs a run at most its bounds; "
        "it no longer fails the run.",
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
        IDENTITY_PATCH,
        date(2026, 12, 3),
        "e899a83",
        "0.9.0",
        "A task's gateway compares actors as one identity however spelt, with the agent's "
        "rights as documented (human:Alice approved human:alice's submission).",
        numbered=True,
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
    Patch(
        KEYS_READ_PATCH,
        date(2026, 12, 3),
        "5f16958",
        "0.10.0",
        "A task told that its scope's actor keys changed reads them through an activity.",
    ),
    Patch(
        KEYS_TOLD_PATCH,
        date(2026, 12, 3),
        "5f16958",
        "0.10.0",
        "A scope whose actor keys change tells each unfinished task to read them.",
    ),
    Patch(
        STATUS_READ_PATCH,
        date(2026, 12, 3),
        "7237101",
        "0.10.0",
        "A task_status signal is the news only: the scope reads the task's status from its "
        "workflow, so a forged signal cannot free a task's dependants.",
    ),
)

BY_ID = {patch.id: patch for patch in PATCHES}
