"""The pydantic-ai runtime on a worker, when the `pydantic-ai` extra is installed.

`runtime_plugins` builds the runtime's agent on the model `HARNESS_PYDANTIC_AI_MODEL` names
(activities.pydantic_ai_model), installs it (workflows.runtimes.pydantic_ai), and returns the
plugins the run worker needs for it: pydantic-ai's own (`PydanticAIPlugin`: its modules passed
through the workflow sandbox, its errors failing a workflow rather than its task; `AgentPlugin`:
the agent's model-request activities), and one that passes the runtime's module through too, so
workflow code runs the agent the worker built. Without the extra it returns none, and nothing
else changes: a session or run that asks for `pydantic-ai` is told to install it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Mapping

from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

RUNTIME_MODULES = ("workflows.runtimes.pydantic_ai", "workflows.runtimes.pydantic_ai_state")
"""Loaded once by the worker, with the agent it built, and passed through the sandbox."""


def pydantic_ai_installed() -> bool:
    return importlib.util.find_spec("pydantic_ai") is not None


def runtime_plugins(environ: Mapping[str, str]) -> list[SimplePlugin]:
    """The run worker's plugins for the pydantic-ai runtime (none without the extra)."""
    if not pydantic_ai_installed():
        return []
    from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin

    from activities.pydantic_ai_model import model_from_environment
    from workflows.runtimes.pydantic_ai import install

    runtime = install(model_from_environment(environ))
    return [PydanticAIPlugin(), AgentPlugin(runtime.agent), _RuntimePassthrough()]


class _RuntimePassthrough(SimplePlugin):
    def __init__(self) -> None:
        super().__init__("durable-harness-pydantic-ai", workflow_runner=_passthrough)


def _passthrough(runner: WorkflowRunner | None) -> WorkflowRunner:
    if runner is None:
        raise ValueError("no workflow runner to add the pydantic-ai runtime's modules to")
    if not isinstance(runner, SandboxedWorkflowRunner):
        return runner  # unsandboxed: nothing to pass through
    restrictions = runner.restrictions.with_passthrough_modules(*RUNTIME_MODULES)
    return dataclasses.replace(runner, restrictions=restrictions)
