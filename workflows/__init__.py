"""Temporal workflows: the orchestrator state machine and its handlers."""

from workflows.agent_loop import AgentLoopWorkflow
from workflows.agent_run import AgentRunWorkflow
from workflows.agent_runtime_loop import AgentRuntimeLoopWorkflow
from workflows.agent_session import AgentSessionWorkflow
from workflows.eval_suite import EvalSuiteWorkflow
from workflows.node_batch import NodeBatchWorkflow
from workflows.scope_graph import ScopeWorkflow
from workflows.task_entity import TaskWorkflow

__all__ = [
    "AgentLoopWorkflow",
    "AgentRunWorkflow",
    "AgentRuntimeLoopWorkflow",
    "AgentSessionWorkflow",
    "EvalSuiteWorkflow",
    "NodeBatchWorkflow",
    "ScopeWorkflow",
    "TaskWorkflow",
]
