"""Agent runtimes a session can run (`harness.engine.agent_runtime.AgentRuntime`): the built-in
loop always; an adapter for another runtime when its extra is installed. `runtime_named` finds
one by the name a session was started with."""

from __future__ import annotations

import importlib

from harness.engine.agent_runtime import AgentRuntime
from harness.engine.sessions import BUILTIN_RUNTIME
from workflows.runtimes.builtin import BuiltinRuntime

RUNTIMES: dict[str, AgentRuntime] = {BUILTIN_RUNTIME: BuiltinRuntime()}
"""The runtimes by name; an adapter adds itself with `register` when the worker loads it."""

ADAPTERS: dict[str, tuple[str, str]] = {
    "pydantic-ai": ("workflows.runtimes.pydantic_ai", "pydantic-ai")
}
"""The adapters the harness ships, by runtime name: the module the worker installs it in, and
the extra that brings its runtime."""


def register(runtime: AgentRuntime) -> None:
    RUNTIMES[runtime.name] = runtime


def runtime_named(name: str) -> AgentRuntime | None:
    """The runtime called `name`: the built-in loop, or an adapter the worker installed (in
    workflow code, the worker's module: the sandbox passes it through)."""
    found = RUNTIMES.get(name)
    if found is None and name in ADAPTERS:
        found = _installed(ADAPTERS[name][0])
    return found


def runtime_missing(name: str) -> str:
    """One line for a runtime this worker does not have, saying what to do."""
    if name in ADAPTERS:
        extra = ADAPTERS[name][1]
        return (
            f"the agent runtime '{name}' is not installed on the worker: install the extra"
            f" (pip install 'durable-harness[{extra}]') and restart the worker"
        )
    known = ", ".join(sorted({*RUNTIMES, *ADAPTERS}))
    return f"no agent runtime '{name}': the runtimes are {known}"


def _installed(module_name: str) -> AgentRuntime | None:
    try:
        module = importlib.import_module(module_name)
    except ImportError:  # its extra is not installed
        return None
    installed: AgentRuntime | None = getattr(module, "INSTALLED", None)
    return installed
