"""The pydantic-ai runtime on a worker, when the `pydantic-ai` extra is installed.

`runtime_plugins` builds the runtime's agent on the model `HARNESS_PYDANTIC_AI_MODEL` names,
installs it (workflows.runtimes.pydantic_ai), and returns the plugins the run worker needs:
pydantic-ai's own (`PydanticAIPlugin`: its modules passed through the workflow sandbox, its
errors failing a workflow rather than its task; `AgentPlugin`: the agent's model-request
activities), and one that passes the runtime's module through too, so workflow code runs the
agent the worker built. Without the extra (or with the setting `off`) it returns none, and
nothing else changes: a session or run that asks for `pydantic-ai` is told to install it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Mapping
from typing import TYPE_CHECKING

from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from activities.llm import ProviderConfigError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

MODEL_SETTING = "HARNESS_PYDANTIC_AI_MODEL"
"""The runtime's model: a pydantic-ai model name (`openai:gpt-4o`, ...; the provider's package
and key are the worker's to have), `offline` (the default: activities.pydantic_ai_model, no key,
no network), or `off`: this worker has no pydantic-ai runtime."""
OFFLINE = "offline"
OFF = "off"
RUNTIME_MODULES = ("workflows.runtimes.pydantic_ai", "workflows.runtimes.pydantic_ai_state")
"""Loaded once by the worker, with the agent it built, and passed through the sandbox."""


def pydantic_ai_installed() -> bool:
    return importlib.util.find_spec("pydantic_ai") is not None


def runtime_plugins(environ: Mapping[str, str]) -> list[SimplePlugin]:
    """The run worker's plugins for the pydantic-ai runtime (none without the extra, or when
    the setting turns it `off`: pydantic-ai's import and the agent take about 2 s of CPU at each
    worker's start)."""
    if not pydantic_ai_installed() or environ.get(MODEL_SETTING, "").strip() == OFF:
        return []
    from pydantic_ai.durable_exec.temporal import AgentPlugin, PydanticAIPlugin

    from workflows.runtimes.pydantic_ai import install

    runtime = install(_model(environ.get(MODEL_SETTING, "").strip() or OFFLINE))
    return [PydanticAIPlugin(), AgentPlugin(runtime.agent), _RuntimePassthrough()]


def _model(name: str) -> Model:
    """The model the setting names (ProviderConfigError, which stops the worker in one line:
    one pydantic-ai cannot build here)."""
    if name == OFFLINE:
        from activities.pydantic_ai_model import offline_model

        return offline_model()
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    try:
        return infer_model(name)
    except (UserError, ImportError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ProviderConfigError(
            f"{MODEL_SETTING}={name}: pydantic-ai cannot build this model ({first});"
            f" name another, or `{OFFLINE}`, or `{OFF}` for no pydantic-ai runtime"
        ) from error


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
