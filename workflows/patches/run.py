"""The patches of the run's engine (AgentRunWorkflow and its child batches): where its calls
run, how it plans, validates, schedules, remembers and ends. Each is asked in the run's first
workflow task unless its note says otherwise; see the registry, workflows.patches."""

from __future__ import annotations

from datetime import date

from workflows.patches.patch import Patch

BATCH_ID_PATCH = "batch-id-names-the-attempt"
HALT_SKIPS_READY_PATCH = "halt-skips-ready-nodes"
ELAPSED_ON_DEMAND_PATCH = "budget-time-read-on-demand"
LLM_QUEUE_PATCH = "llm-calls-on-their-own-queue"
REQUEST_BOUNDS_PATCH = "request-bounds-checked-at-start"
OUTCOME_STATUS_PATCH = "workflow-status-is-the-outcome"
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
LOCAL_FAILURES_PATCH = "local-failures-are-activity-errors"
MEMORY_DEGRADES_PATCH = "memory-failures-degrade-within-bounds"
FAILED_PROVIDER_PATCH = "failed-provider-phase"
CHARGE_FAILED_PATCH = "charge-failed-model-calls"
RESULT_PATHS_PATCH = "node-result-paths-checked-against-result-schemas"
AGENT_PROGRESS_UNAWAITED_PATCH = "agent-progress-told-beside-the-next-turn"

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
        OUTCOME_STATUS_PATCH,
        date(2026, 12, 1),
        "813a33b",
        "0.3.0",
        "The workflow's status is the run's outcome: a failed run ends Failed, a run cancelled "
        "through Temporal ends Canceled (every run ended Completed before).",
    ),
    Patch(
        WORK_CONTRACT_PATCH,
        date(2026, 12, 1),
        "ebd4108",
        "0.4.0",
        "A run in a scope is held to its scope's contract from its start.",
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
        FAILED_PROVIDER_PATCH,
        date(2026, 12, 4),
        "a0d764d",
        "0.10.0",
        "A run that halts on a model call the provider refused or kept failing (the planner's, "
        "a writing tool's or agent turn's, the judge's) ends FAILED_PROVIDER, where it ended "
        "FAILED_VALIDATION or FAILED_EXECUTION and a failed judge let the report pass; a "
        "model's cannot_plan is planned once more before the user is asked. Asked when such a "
        "failure arrives, not in the first workflow task.",
    ),
    Patch(
        CHARGE_FAILED_PATCH,
        date(2026, 12, 4),
        "7217a16",
        "0.10.0",
        "What a failed model call cost (a cut-off, unparseable or refused reply, a cannot_plan, "
        "an abandoned timeout, a refused request), as its activity reports it, is charged to the "
        "run's usage and budget. Asked where such a failure is charged, not at the run's start.",
    ),
    Patch(
        RESULT_PATHS_PATCH,
        date(2026, 12, 4),
        "a209a1c",
        "0.10.0",
        "Validation checks each NODE_RESULT path against its source tool's result schema; a "
        "run that validated its plan without the check keeps its verdict on replay.",
    ),
    Patch(
        AGENT_PROGRESS_UNAWAITED_PATCH,
        date(2026, 12, 4),
        "68481b4",
        "0.10.0",
        "An agent's loop sends its progress report to the run beside its next turn instead of "
        "waiting for the server to deliver it first (two workflow-task round trips per turn "
        "with tool calls); reports and asks still reach the run in order, and the last is "
        "delivered before the loop ends. Asked in the loop's first workflow task.",
    ),
)
