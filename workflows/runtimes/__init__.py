"""Agent runtimes a session can run (`harness.engine.agent_runtime.AgentRuntime`): the built-in
loop always; an adapter for another runtime when its extra is installed. `runtime_named` finds
one by the name a session was started with."""

from __future__ import annotations

from harness.engine.agent_runtime import AgentRuntime
from harness.engine.sessions import BUILTIN_RUNTIME
from workflows.runtimes.builtin import BuiltinRuntime

RUNTIMES: dict[str, AgentRuntime] = {BUILTIN_RUNTIME: BuiltinRuntime()}
"""The runtimes by name; an adapter adds itself with `register` when the worker loads it."""


def register(runtime: AgentRuntime) -> None:
    RUNTIMES[runtime.name] = runtime


def runtime_named(name: str) -> AgentRuntime | None:
    return RUNTIMES.get(name)
