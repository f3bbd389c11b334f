"""Temporal workflows: the orchestrator state machine and its handlers."""

from workflows.agent_run import WORKFLOW_NAME, AgentRunWorkflow
from workflows.node_batch import NodeBatchWorkflow

__all__ = ["WORKFLOW_NAME", "AgentRunWorkflow", "NodeBatchWorkflow"]
