"""The TOOL evidence of a node a run finished: one record per run, plan attempt and node,
pointing at the result in the run (never a copy of it). The run records it when the attempt's
nodes are done, and a management tool that cites the node records the very same command, so
whichever comes second is a duplicate."""

from __future__ import annotations

from harness.governance.task_commands import RecordEvidence
from harness.governance.work import EvidenceKind


def node_evidence(
    run_id: str, attempt: int, node_id: str, tool: str | None = None
) -> tuple[RecordEvidence, str]:
    """The command and its idempotency key (`tool`: which tool the node ran, so an
    acceptance check can ask what the evidence is of)."""
    evidence = RecordEvidence(
        kind=EvidenceKind.TOOL,
        summary=f"result of node {node_id} (plan attempt {attempt})",
        content_ref=f"run:{run_id}/node:{node_id}",
        run_id=run_id,
        node_id=node_id,
        tool=tool,
    )
    return evidence, f"harness:{run_id}:{attempt}:{node_id}"
