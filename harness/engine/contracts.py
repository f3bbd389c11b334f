"""The names the run's parts agree on: workflows, activities, signals, updates and queries.

Workflows call activities by these names with the request and result models of
`harness.engine.messages`, so they never import the modules that hold SDK clients; activities
register
under them; the CLI and external systems send signals and updates by them. Released names never
change: a renamed activity or signal strands every run that is still open.
"""

from __future__ import annotations

from typing import Final

RUN_WORKFLOW: Final = "AgentRun"
BATCH_WORKFLOW: Final = "AgentRunNodeBatch"
AGENT_LOOP_WORKFLOW: Final = "AgentLoop"
"""An agent node's tool-use loop, a child of its run (harness.engine.agent_loop)."""
AGENT_SESSION_WORKFLOW: Final = "AgentSession"
"""An agent session: one bounded slice per message (harness.engine.sessions)."""
SESSION_SEND_UPDATE: Final = "send"
SESSION_QUERY: Final = "session"
AGENT_RUNTIME_LOOP_WORKFLOW: Final = "AgentRuntimeLoop"
"""An agent node driven through an `AgentRuntime` (a run's `agent_runtime`), a child of its run."""

LIST_TOOLS_ACTIVITY: Final = "harness.list_tools"
PLAN_ACTIVITY: Final = "harness.plan"
RUN_TOOL_ACTIVITY: Final = "harness.run_tool"
RUN_TOOLS_ACTIVITY: Final = "harness.run_tools"
PROBE_OPERATION_ACTIVITY: Final = "harness.probe_operation"
CHECK_REPORT_ACTIVITY: Final = "harness.check_report"
VALIDATE_PLAN_ACTIVITY: Final = "harness.validate_plan"
JUDGE_ACTIVITY: Final = "harness.judge"
CANCEL_OWN_RUN_ACTIVITY: Final = "harness.cancel_own_run"
AGENT_TURN_ACTIVITY: Final = "harness.agent_turn"
"""One model turn of an agent node's tool-use loop (harness.catalog.agent_turns)."""

APPROVE_SIGNAL: Final = "approve"
ANSWER_SIGNAL: Final = "answer"
DELIVER_SIGNAL: Final = "deliver"
CANCEL_SIGNAL: Final = "cancel"
AGENT_ALLOWANCE_ASK_SIGNAL: Final = "agent_allowance_ask"
"""An agent loop asks its run for more of the budget (sent by the child workflow)."""
AGENT_ALLOWANCE_ANSWER_SIGNAL: Final = "agent_allowance_answer"
"""The run's answer to an agent loop's ask (sent by the run to the child)."""
AGENT_PROGRESS_SIGNAL: Final = "agent_progress"
"""An agent loop tells its run what it has spent and done, after each turn's calls."""
AGENT_WAIT_ASK_SIGNAL: Final = "agent_wait_ask"
"""An agent loop asks its run to open a wait (ask_user, request_approval) for its model."""
AGENT_WAIT_ANSWER_SIGNAL: Final = "agent_wait_answer"
"""How that wait ended (sent by the run to the child)."""

APPROVE_UPDATE: Final = "approve_sync"
ANSWER_UPDATE: Final = "answer_sync"
DELIVER_UPDATE: Final = "deliver_sync"

STATUS_QUERY: Final = "status"
TRACE_QUERY: Final = "trace"
RESULT_QUERY: Final = "result"
WAITS_QUERY: Final = "waits"
PROGRESS_QUERY: Final = "progress"


LLM_QUEUE_SUFFIX: Final = "-llm"


def llm_task_queue(task_queue: str) -> str:
    """Where a run's model calls go: its own task queue's twin, whose workers carry the
    server-side rate limit toward the providers (HARNESS_LLM_ACTIVITIES_PER_SECOND)."""
    return f"{task_queue}{LLM_QUEUE_SUFFIX}"


TASK_WORKFLOW: Final = "HarnessTask"
SCOPE_WORKFLOW: Final = "HarnessScope"
TASK_COMMAND_UPDATE: Final = "task_command"
SCOPE_COMMAND_UPDATE: Final = "scope_command"
TASK_SCOPE_CLAIM_UPDATE: Final = "claim_task_scope"
"""A run's own update: the one scope a run that works on no task may create its task in."""
TASK_STATUS_SIGNAL: Final = "task_status"
TASK_CONTEXT_QUERY: Final = "context"
TASK_LEDGER_QUERY: Final = "ledger"
TASK_STATUS_QUERY: Final = "status"
SCOPE_GRAPH_QUERY: Final = "graph"
TASK_COMMANDS_ACTIVITY: Final = "harness.task_commands"
SCOPE_RULES_UPDATE: Final = "scope_rules"
SCOPE_RULES_QUERY: Final = "rules"
CONTRACT_IN_FORCE_QUERY: Final = "contract_in_force"
TASK_ACCEPTANCE_ACTIVITY: Final = "harness.task_acceptance"
"""A task's completion or approval: the contract in force, and the acceptance checks."""
TASK_SCOPE_KEYS_ACTIVITY: Final = "harness.task_scope_keys"
SCOPE_TASK_STATUS_ACTIVITY: Final = "harness.scope_task_status"
"""0.10: a task reads its scope's actor keys after the scope says they changed."""
TASK_KEYS_SIGNAL: Final = "scope_keys_changed"
"""0.10: a scope tells its tasks their keys changed; each reads them from the scope (a signal
anyone could send carries no keys, only the news)."""
RUN_WORK_CONTEXT_ACTIVITY: Final = "harness.run_work_context"
"""A bound run's contract in force, rules and review comments, read when it starts."""
MEMORY_RETRIEVE_ACTIVITY: Final = "harness.memory_retrieve"
"""The memories the planner sees: session episodes, similar episodes, facts, ranked."""
MEMORY_RECORD_ACTIVITY: Final = "harness.memory_record"
"""A finished run's episode, written to the memory store."""
TASK_MANAGE_TOOL: Final = "harness_task_manage"
"""The management tool whose `create` binds a run that works on no task to the task it made."""


def scope_workflow_id(scope: str) -> str:
    """The one workflow that holds a scope's task graph."""
    return f"{scope}/tasks"


def task_workflow_id(scope: str, task_id: str) -> str:
    """The entity workflow of one task: its ledger and its status."""
    return f"{scope}/{task_id}"


PROVIDER_NAMES: Final = ("anthropic", "openai", "scripted")
"""The LLM providers a worker can build (activities.llm.registry), named here so the CLI can
refuse another name without loading any SDK."""

EVAL_WORKFLOW: Final = "HarnessEval"
"""An eval suite: its cases run as child AgentRun workflows."""
EVAL_CASE_ACTIVITY: Final = "harness.eval_case"
"""Drives one eval case's run (its scripted answers and approvals) to its end and scores it."""
EVAL_ACTOR: Final = "system:eval"
"""Who cancels a case's run that waits for what its case does not script, or runs too long."""
