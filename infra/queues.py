"""What each of the worker's two task queues carries, stated once: the run's queue (its workflows,
and the activities that call no model) and its twin for model calls, which carries the
server-side rate limit toward the providers (harness.engine.contracts.llm_task_queue).

The worker's queue plugin (worker.queue_plugin) registers these sets, and the replayer replays
every workflow named here. Activities are named by the strings workflows schedule them by, so
what a queue carries reads in the workflows' own vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from harness.engine.contracts import (
    AGENT_TURN_ACTIVITY,
    CANCEL_OWN_RUN_ACTIVITY,
    CHECK_REPORT_ACTIVITY,
    EVAL_CASE_ACTIVITY,
    JUDGE_ACTIVITY,
    LIST_TOOLS_ACTIVITY,
    MEMORY_RECORD_ACTIVITY,
    MEMORY_RETRIEVE_ACTIVITY,
    PLAN_ACTIVITY,
    PROBE_OPERATION_ACTIVITY,
    RUN_TOOL_ACTIVITY,
    RUN_TOOLS_ACTIVITY,
    RUN_WORK_CONTEXT_ACTIVITY,
    SCOPE_TASK_STATUS_ACTIVITY,
    TASK_ACCEPTANCE_ACTIVITY,
    TASK_COMMANDS_ACTIVITY,
    TASK_SCOPE_KEYS_ACTIVITY,
    VALIDATE_PLAN_ACTIVITY,
    llm_task_queue,
)
from workflows import (
    AgentLoopWorkflow,
    AgentRuntimeLoopWorkflow,
    AgentRunWorkflow,
    AgentSessionWorkflow,
    EvalSuiteWorkflow,
    NodeBatchWorkflow,
    ScopeWorkflow,
    TaskWorkflow,
)


class Queue(StrEnum):
    RUN = "run"
    """The queue runs, tasks, scopes and eval suites are started on: `HARNESS_TASK_QUEUE`."""
    LLM = "llm"
    """Its twin, where model calls wait for the rate limit."""


@dataclass(frozen=True)
class QueueSet:
    workflows: tuple[type, ...]
    activities: frozenset[str]
    """Activity names (harness.engine.contracts)."""


MODEL_CALLS = frozenset({PLAN_ACTIVITY, JUDGE_ACTIVITY, RUN_TOOL_ACTIVITY})
"""What workflows schedule on the model queue: the planner, the judge, and the tools that call a
model (`ToolSpec.uses_llm`); workflows send them there through `llm_queue()`."""

QUEUES: dict[Queue, QueueSet] = {
    Queue.RUN: QueueSet(
        workflows=(
            AgentRunWorkflow,
            NodeBatchWorkflow,
            AgentLoopWorkflow,
            AgentSessionWorkflow,
            AgentRuntimeLoopWorkflow,
            ScopeWorkflow,
            TaskWorkflow,
            EvalSuiteWorkflow,
        ),
        activities=frozenset(
            {
                LIST_TOOLS_ACTIVITY,
                # the model calls too: runs recorded before the model queue (LLM_QUEUE_PATCH)
                # schedule them on their own queue, and most tools call no model
                *MODEL_CALLS,
                RUN_TOOLS_ACTIVITY,
                PROBE_OPERATION_ACTIVITY,
                CHECK_REPORT_ACTIVITY,
                VALIDATE_PLAN_ACTIVITY,
                CANCEL_OWN_RUN_ACTIVITY,
                TASK_COMMANDS_ACTIVITY,
                TASK_ACCEPTANCE_ACTIVITY,
                TASK_SCOPE_KEYS_ACTIVITY,
                SCOPE_TASK_STATUS_ACTIVITY,
                RUN_WORK_CONTEXT_ACTIVITY,
                MEMORY_RETRIEVE_ACTIVITY,
                MEMORY_RECORD_ACTIVITY,
                EVAL_CASE_ACTIVITY,
            }
        ),
    ),
    Queue.LLM: QueueSet(
        # no workflow is started there: a worker that polled it for workflow tasks would only
        # hold pollers and a sticky queue for nothing
        workflows=(),
        # an agent's model turn is on this queue only: no run recorded before it schedules it
        activities=MODEL_CALLS | {AGENT_TURN_ACTIVITY},
    ),
}

WORKFLOWS: tuple[type, ...] = tuple(
    dict.fromkeys(flow for queue in QUEUES.values() for flow in queue.workflows)
)
"""Every workflow of the harness, in order: what a replayer must know."""


def queue_of(task_queue: str, run_queue: str) -> Queue | None:
    """Which of a worker's queues `task_queue` is, for the worker of `run_queue`; None when it is
    neither."""
    if task_queue == run_queue:
        return Queue.RUN
    if task_queue == llm_task_queue(run_queue):
        return Queue.LLM
    return None
