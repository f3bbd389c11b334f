"""Every `workflow.patched` id of the workflow code: one registry, each with when and why it came.

A patch id is written into a run's history (a MARKER_RECORDED event) the first time live code
asks `workflow.patched(id)`; on replay the answer is whether the history holds that marker, so a
run recorded before a change keeps its old path and a run started after takes the new one.
Which behaviour a history gets is decided here, in the workflow layer: the pure rules in
`harness/` take plain parameters (e.g. `harness.waits.wait_book.DeliveryRules`), chosen by the
workflow from these patches.

The ids live in a module per workflow: `run` (the run's engine and its child batches),
`run_waits` (the run's waits and the messages that answer them), `task` (the task entity) and
`scope` (the scope graph); `patch` holds the type. This module is the one registry: workflow
code imports every constant from here, and PATCHES and BY_ID hold them all.

Adding a patch: add its constant and its `Patch` entry to its workflow's module, name the
constant in the imports and `__all__` below (mypy and ruff hold the two together), and import
it from here where it is asked. tests/workflows/test_patches.py fails for an id asked but not
registered, an entry never asked, a workflow's module whose entries are not all here, or a
marker in a recorded history that no entry names. The lifecycle (patched -> deprecate_patch ->
removal, and when a recorded history may be retired) is in docs/changing-workflow-code.md.
"""

from __future__ import annotations

from operator import attrgetter

from workflows.patches import run, run_waits, scope, task
from workflows.patches.patch import Patch
from workflows.patches.run import (
    AGENT_PROGRESS_UNAWAITED_PATCH,
    ATTEMPTS_RESERVED_PATCH,
    BATCH_ID_PATCH,
    BIG_PLAN_PATCH,
    CHARGE_FAILED_PATCH,
    CHEAP_GROUPS_PATCH,
    ECONOMY_PATCH,
    ELAPSED_ON_DEMAND_PATCH,
    FAILED_PROVIDER_PATCH,
    GIVEN_PLAN_FINAL_PATCH,
    HALT_SKIPS_READY_PATCH,
    LLM_QUEUE_PATCH,
    LOCAL_CONTRACT_READ_PATCH,
    LOCAL_FAILURES_PATCH,
    LOCAL_MEMORY_PATCH,
    MEMORY_DEGRADES_PATCH,
    MEMORY_PATCH,
    OUTCOME_STATUS_PATCH,
    PARALLEL_BATCHES_PATCH,
    REQUEST_BOUNDS_PATCH,
    RESULT_PATHS_PATCH,
    WORK_CONTRACT_PATCH,
)
from workflows.patches.run_waits import (
    ACTOR_IDENTITY_PATCH,
    AGENT_RECONCILE_PATCH,
    APPROVAL_COVERS_AT_START_PATCH,
    APPROVAL_COVERS_PATCH,
    CANCEL_BEFORE_START_PATCH,
    DELIVERY_BOUNDS_PATCH,
    DELIVERY_RULES_PATCH,
    EARLY_LOTS_PATCH,
    EARLY_SIGNALS_PATCH,
    KNOWN_OUTCOMES_PATCH,
    LATE_RESULT_RECONCILES_PATCH,
    LATE_TRACE_PATCH,
    QUIET_CANCEL_PATCH,
    RECONCILE_RULES_PATCH,
    SIGNAL_CANCEL_PATCH,
    SIGNED_ANSWERS_PATCH,
)
from workflows.patches.scope import (
    KEYS_TOLD_PATCH,
    STATUS_READ_PATCH,
)
from workflows.patches.task import (
    CONTRACT_PATCH,
    FENCE_PATCH,
    IDENTITY_PATCH,
    KEYS_READ_PATCH,
)

PATCHES: tuple[Patch, ...] = tuple(
    sorted(run.PATCHES + run_waits.PATCHES + task.PATCHES + scope.PATCHES, key=attrgetter("added"))
)
"""Every workflow's patches, in the order they came."""

BY_ID = {patch.id: patch for patch in PATCHES}

__all__ = [
    "ACTOR_IDENTITY_PATCH",
    "AGENT_PROGRESS_UNAWAITED_PATCH",
    "AGENT_RECONCILE_PATCH",
    "APPROVAL_COVERS_AT_START_PATCH",
    "APPROVAL_COVERS_PATCH",
    "ATTEMPTS_RESERVED_PATCH",
    "BATCH_ID_PATCH",
    "BIG_PLAN_PATCH",
    "BY_ID",
    "CANCEL_BEFORE_START_PATCH",
    "CHARGE_FAILED_PATCH",
    "CHEAP_GROUPS_PATCH",
    "CONTRACT_PATCH",
    "DELIVERY_BOUNDS_PATCH",
    "DELIVERY_RULES_PATCH",
    "EARLY_LOTS_PATCH",
    "EARLY_SIGNALS_PATCH",
    "ECONOMY_PATCH",
    "ELAPSED_ON_DEMAND_PATCH",
    "FAILED_PROVIDER_PATCH",
    "FENCE_PATCH",
    "GIVEN_PLAN_FINAL_PATCH",
    "HALT_SKIPS_READY_PATCH",
    "IDENTITY_PATCH",
    "KEYS_READ_PATCH",
    "KEYS_TOLD_PATCH",
    "KNOWN_OUTCOMES_PATCH",
    "LATE_RESULT_RECONCILES_PATCH",
    "LATE_TRACE_PATCH",
    "LLM_QUEUE_PATCH",
    "LOCAL_CONTRACT_READ_PATCH",
    "LOCAL_FAILURES_PATCH",
    "LOCAL_MEMORY_PATCH",
    "MEMORY_DEGRADES_PATCH",
    "MEMORY_PATCH",
    "OUTCOME_STATUS_PATCH",
    "PARALLEL_BATCHES_PATCH",
    "PATCHES",
    "QUIET_CANCEL_PATCH",
    "RECONCILE_RULES_PATCH",
    "REQUEST_BOUNDS_PATCH",
    "RESULT_PATHS_PATCH",
    "SIGNAL_CANCEL_PATCH",
    "SIGNED_ANSWERS_PATCH",
    "STATUS_READ_PATCH",
    "WORK_CONTRACT_PATCH",
    "Patch",
]
