"""A pack whose tools count their calls, for tests that kill a worker mid-loop: each call
appends a line to the file `TALLY_FILE` names (`tally NODE ATTEMPT`; `linger-start` and
`linger-done` around linger's two seconds; `post NODE LABEL` for the idempotent side effect), so
a test can tell which call ran, and how often.
Loaded by worker processes through HARNESS_PACKS=tests.scenarios.tally:TALLY."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from durable_harness import Pack, ToolContext, tool

TALLY_FILE = "HARNESS_TEST_TALLY_FILE"
LINGER_SECONDS = 2.0


def _record(line: str) -> None:
    with Path(os.environ[TALLY_FILE]).open("a") as file:
        file.write(line + "\n")


@tool
def tally(label: str, ctx: ToolContext) -> dict[str, str]:
    """Count one call for `label`."""
    _record(f"tally {ctx.node_id} {ctx.attempt}")
    return {"counted": label}


@tool(timeout=5)
async def linger(label: str, ctx: ToolContext) -> dict[str, str]:
    """Take two seconds over `label` (a call a killed worker leaves in flight)."""
    _record(f"linger-start {ctx.node_id} {ctx.attempt}")
    await asyncio.sleep(LINGER_SECONDS)
    _record(f"linger-done {ctx.node_id} {ctx.attempt}")
    return {"lingered": label}


@tool(side_effects=True, idempotent=True)
def post(label: str, ctx: ToolContext) -> dict[str, str]:
    """Post `label` once per call (its key is the run's and the call's node's)."""
    _record(f"post {ctx.node_id} {label}")
    return {"posted": label, "key": f"{ctx.run_id}:{ctx.node_id}"}


TALLY = Pack("tally", "Tools that count their calls.", [tally, linger, post])


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []
