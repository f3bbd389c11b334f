"""The run's current details, as the Temporal UI shows them: phase, counts, each pending wait with
the commands that answer it, and the plan."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from harness.core.plan import Plan
from harness.engine.dag import NodeStatus
from harness.engine.run import RunCounts, RunPhase
from harness.waits.wait_book import Wait
from harness.waits.wait_hints import harness_command, signal_of

PLAN_DETAILS_NODES = 20


WAIT_DETAILS = 5


def current_details(
    phase: RunPhase,
    *,
    run_id: str,
    attempt: int,
    counts: RunCounts,
    pending: Sequence[Wait],
    pressure: float,
    plan: Plan | None,
    statuses: Mapping[str, NodeStatus],
) -> str:
    return (
        f"**{phase.value}** (attempt {attempt})\n\n"
        f"nodes: {counts.done} done, {counts.failed} failed, {counts.skipped} skipped "
        f"of {counts.nodes}; pending waits: {len(pending)}; replans: {counts.replans}; "
        f"budget pressure: {pressure:.2f}"
        + _wait_lines(run_id, pending)
        + _plan_lines(plan, statuses)
    )


def _wait_lines(run_id: str, pending: Sequence[Wait]) -> str:
    """Each pending wait (the first few): what it waits for and what answers it, in one flat
    list (the UI's markdown draws no nested lists)."""
    if not pending:
        return ""
    lines = []
    for wait in pending[:WAIT_DETAILS]:
        lines.append(f"- `{wait.id}` {wait.kind.value}: {wait.prompt}")
        command = harness_command(run_id, wait)
        if command:  # a timer is answered by time alone
            lines.append(f"- answer: `{command.splitlines()[0]}`")
        signal = signal_of(wait)
        if signal is not None:
            name, payload = signal
            lines.append(
                f"- or signal: `temporal workflow signal --workflow-id {run_id} --name {name} "
                f"--input '{json.dumps(payload)}'`"
            )
    more = len(pending) - WAIT_DETAILS
    if more > 0:
        lines.append(f"- … and {more} more (`harness waits {run_id}`)")
    return "\n\nwaiting for:\n\n" + "\n".join(lines)


def _plan_lines(plan: Plan | None, statuses: Mapping[str, NodeStatus]) -> str:
    """The first nodes of the plan and each one's status."""
    if plan is None:
        return ""
    shown = plan.nodes[:PLAN_DETAILS_NODES]
    lines = [f"- `{node.id}` {node.tool} ({statuses.get(node.id, 'PLANNED')})" for node in shown]
    more = len(plan.nodes) - len(shown)
    if more > 0:
        lines.append(f"- … and {more} more")
    return "\n\nplan:\n\n" + "\n".join(lines)
