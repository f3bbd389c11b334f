"""The run's current details, as the Temporal UI shows them: phase, counts, waits and the plan."""

from __future__ import annotations

from collections.abc import Mapping

from harness.dag import NodeStatus
from harness.plan import Plan
from harness.run import RunCounts, RunPhase

PLAN_DETAILS_NODES = 20


def current_details(
    phase: RunPhase,
    *,
    attempt: int,
    counts: RunCounts,
    pending_waits: int,
    pressure: float,
    plan: Plan | None,
    statuses: Mapping[str, NodeStatus],
) -> str:
    return (
        f"**{phase.value}** (attempt {attempt})\n\n"
        f"nodes: {counts.done} done, {counts.failed} failed, {counts.skipped} skipped "
        f"of {counts.nodes}; pending waits: {pending_waits}; replans: {counts.replans}; "
        f"budget pressure: {pressure:.2f}" + _plan_lines(plan, statuses)
    )


def _plan_lines(plan: Plan | None, statuses: Mapping[str, NodeStatus]) -> str:
    """The first nodes of the plan and each one's status."""
    if plan is None:
        return ""
    shown = plan.nodes[:PLAN_DETAILS_NODES]
    lines = [f"- `{node.id}` {node.tool} ({statuses.get(node.id, 'PLANNED')})" for node in shown]
    more = len(plan.nodes) - len(shown)
    if more > 0:
        lines.append(f"- … and {more} more")
    return "\n\nplan:\n" + "\n".join(lines)
