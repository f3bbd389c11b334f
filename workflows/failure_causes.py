"""What caused a phase's failure, as the recovery table reads it (harness.engine.recovery): a
model call that the provider refused or kept failing ends a halting run FAILED_PROVIDER, and a
model's `cannot_plan` is planned once more before the user is asked. Both since
FAILED_PROVIDER_PATCH, asked when such a failure arrives: runs recorded before end
FAILED_VALIDATION or FAILED_EXECUTION, ask at once, and pass a report whose judge failed."""

from __future__ import annotations

from temporalio import workflow

from harness.core.errors import ErrorCode, FailureContext
from harness.engine.node_ledger import NodeLedger
from harness.engine.recovery import FailureCause, is_provider_failure
from harness.engine.run_state import RunState
from workflows.patches import FAILED_PROVIDER_PATCH


def provider_failed(code: str) -> bool:
    """A model call's failure that ends the run FAILED_PROVIDER when it halts."""
    return is_provider_failure(code) and workflow.patched(FAILED_PROVIDER_PATCH)


def planning_cause(state: RunState) -> FailureCause:
    """The planner's failure: its model's `cannot_plan`, or a model call that failed."""
    code = state.failures[0].code
    if code == ErrorCode.CANNOT_PLAN and workflow.patched(FAILED_PROVIDER_PATCH):
        return FailureCause(model_refusals=state.model_refusals())
    return FailureCause(provider_failed=provider_failed(code))


def execution_cause(ledger: NodeLedger, first: FailureContext) -> FailureCause:
    """The first failed node's: a model call failed in a tool that calls one (a writing tool,
    an agent node's turn)."""
    calls_model = first.node_id is not None and ledger.spec(first.node_id).uses_llm
    return FailureCause(provider_failed=calls_model and provider_failed(first.code))
