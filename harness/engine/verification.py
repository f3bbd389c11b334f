"""Structural verification: the deterministic checks every run must pass before anything else."""

from __future__ import annotations

from collections.abc import Mapping

from harness.catalog.tools import ToolCatalog
from harness.core.plan import Plan
from harness.engine.dag import NodeStatus

VERIFICATION_FAILED = "VERIFICATION_FAILED"
"""The code of the failures a failed verdict gives the planner, one per reason."""


def structural_problems(
    plan: Plan, catalog: ToolCatalog, statuses: Mapping[str, NodeStatus], report: str | None
) -> list[str]:
    """Exactly one final-synthesis node, DONE, all its dependencies DONE, and a non-empty report."""
    finals = catalog.final_synthesis_nodes(plan)
    if len(finals) != 1:
        return [f"expected exactly one final-synthesis node, found {len(finals)}"]
    final = finals[0]
    problems = []
    if statuses.get(final.id) is not NodeStatus.DONE:
        problems.append(f"final-synthesis node '{final.id}' is {statuses.get(final.id)}, not DONE")
    not_done = [dep for dep in final.deps if statuses.get(dep) is not NodeStatus.DONE]
    if not_done:
        problems.append(f"dependencies of '{final.id}' not DONE: {', '.join(not_done)}")
    if not report or not report.strip():
        problems.append("the report is empty")
    return problems
