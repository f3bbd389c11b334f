"""Temporal workflows: the orchestrator state machine and its handlers.

The workflow classes are loaded when first named (`from workflows import AgentRunWorkflow`), not
with the package: the sandbox imports a workflow's module afresh for every run, and with it this
package, so a run of one workflow loads only the modules that workflow uses (a node batch or an
agent's loop, child workflows each, no longer load all 46 modules of the package: 31 ms of CPU
per run)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workflows.agent_loop import AgentLoopWorkflow
    from workflows.agent_run import AgentRunWorkflow
    from workflows.agent_runtime_loop import AgentRuntimeLoopWorkflow
    from workflows.agent_session import AgentSessionWorkflow
    from workflows.eval_suite import EvalSuiteWorkflow
    from workflows.node_batch import NodeBatchWorkflow
    from workflows.scope_graph import ScopeWorkflow
    from workflows.task_entity import TaskWorkflow

_MODULES = {
    "AgentLoopWorkflow": "workflows.agent_loop",
    "AgentRunWorkflow": "workflows.agent_run",
    "AgentRuntimeLoopWorkflow": "workflows.agent_runtime_loop",
    "AgentSessionWorkflow": "workflows.agent_session",
    "EvalSuiteWorkflow": "workflows.eval_suite",
    "NodeBatchWorkflow": "workflows.node_batch",
    "ScopeWorkflow": "workflows.scope_graph",
    "TaskWorkflow": "workflows.task_entity",
}

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


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'workflows' has no attribute {name!r}")
    return getattr(import_module(module), name)
