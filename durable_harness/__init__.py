"""durable_harness: the one package a user of the harness imports.

Write a typed function, and `@tool` makes it a tool the planner can call:

    from durable_harness import ToolContext, ToolError, tool

    @tool
    async def wind_speed(station: str, ctx: ToolContext, unit: str = "m/s") -> dict[str, float]:
        '''The latest wind reading at a weather station.'''

Gather tools into a `Pack` (a scenario: its tools, instructions, optional offline planner and
check), which the worker loads from the built-ins, the `durable_harness.packs` entry points and
`HARNESS_PACKS`.

Start runs, follow them and deliver what they wait for with `Harness` (docs/python-api.md):

    from durable_harness import Harness

    harness = await Harness.connect()
    run = await harness.start("Compare Paris and Tokyo", session_id="s-1")
    result = await run.result()                       # the RunResult, whatever the ending

Talk to an agent session, one bounded slice per message (docs/sessions.md):

    reply = await harness.send("s-1", "Find the code. value: 42", scenario="synthetic")
    reply.status                                      # DONE, WAITING or CONTINUATION_REQUIRED

A team's own agent runtime runs sessions through the `AgentRuntime` protocol
(docs/agent-runtimes.md), with `SliceRequest`, `SliceResult`, `RuntimeCheckpoint`,
`PendingWait` and `WaitResult`.

Tasks, contracts and lessons are `harness.tasks` (`durable_harness.tasks` holds their commands).

What the client raises is a `HarnessError` (`InvalidInput`, with `TaskRefused` for a command a
task's gateway refused, `NotFound`, `Unavailable`, `RunFailed`), one line each.

Everything else (`harness`, `workflows`, `activities`, `scenarios`, `worker`, `starter`) is
internal, and so is `durable_harness._client`. This package may import the pure domain
(`harness`), the settings and client plumbing (`infra`) and, for the client, the workflows'
names (`workflows`); never `starter` (the CLI imports this package, not the other way), and the
domain and the workflows never import it. The built-in scenarios and the activities import what
a tool is at run time from it (`durable_harness.runtime`). `Harness` and `Run` load the Temporal
SDK, so they are imported when first named: `import durable_harness` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from durable_harness.errors import ErrorCode, ToolDefinitionError, ToolError
from durable_harness.exceptions import (
    HarnessError,
    InvalidInput,
    NotFound,
    RunFailed,
    TaskRefused,
    Unavailable,
)
from durable_harness.pack import Pack, PackDefinitionError
from durable_harness.runtime import ToolContext
from durable_harness.tools import FunctionTool, tool
from harness.engine.agent_runtime import AgentRuntime
from harness.engine.run import RunRequest, RunResult, RunStatus
from harness.engine.sessions import (
    PendingWait,
    RuntimeCheckpoint,
    SessionReply,
    SessionStatus,
    SliceLimits,
    SliceRequest,
    SliceResult,
    WaitResult,
)
from infra.settings import Settings, SettingsError

if TYPE_CHECKING:
    from durable_harness.client import Harness, Run

_LAZY = {"Harness": "durable_harness.client", "Run": "durable_harness.client"}
"""Names whose module loads the Temporal SDK: imported on first use."""

__all__ = [
    "AgentRuntime",
    "ErrorCode",
    "FunctionTool",
    "Harness",
    "HarnessError",
    "InvalidInput",
    "NotFound",
    "Pack",
    "PackDefinitionError",
    "PendingWait",
    "Run",
    "RunFailed",
    "RunRequest",
    "RunResult",
    "RunStatus",
    "RuntimeCheckpoint",
    "SessionReply",
    "SessionStatus",
    "Settings",
    "SettingsError",
    "SliceLimits",
    "SliceRequest",
    "SliceResult",
    "TaskRefused",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "Unavailable",
    "WaitResult",
    "tool",
]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # found directly from now on
        return value
    raise AttributeError(f"module 'durable_harness' has no attribute {name!r}")
