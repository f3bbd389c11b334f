"""Temporal workflows: the orchestrator state machine and its handlers."""

from workflows.agent_run import AgentRunWorkflow
from workflows.node_batch import NodeBatchWorkflow

__all__ = ["AgentRunWorkflow", "NodeBatchWorkflow"]
