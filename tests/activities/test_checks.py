"""The plan validation activity: a wide plan's verdict, reached outside the workflow."""

from __future__ import annotations

from activities.checks import validate_plan
from harness.engine.messages import PlanCheckRequest
from harness.engine.validation import IssueCode
from harness.engine.validation import validate_plan as plan_issues
from tests.factories import node, ref, synthetic_catalog, synthetic_plan


async def test_the_validation_activity_gives_the_workflows_own_verdict() -> None:
    leaves = [node(f"n{i}", "delay", ms=0, value=i) for i in range(3)]
    leaves.append(node("n3", "delay", ms="soon", value=3))  # not an integer
    leaves.append(node("n4", "teleport", value=4))  # not in the catalog
    final = node("final", "collect", ref("inputs", "n0"), deps=[leaf.id for leaf in leaves])
    plan, catalog = synthetic_plan(*leaves, final), synthetic_catalog()
    checked = await validate_plan(PlanCheckRequest(plan=plan, catalog=catalog, max_nodes=5))
    assert checked.issues == plan_issues(plan, catalog, 5)
    codes = {issue.code for issue in checked.issues}
    assert {IssueCode.TOO_MANY_NODES, IssueCode.UNKNOWN_TOOL} <= codes
    assert any(issue.node_id == "n3" for issue in checked.issues)
    kept = leaves[:3]
    done = node("final", "collect", ref("inputs", "n0"), deps=[leaf.id for leaf in kept])
    valid = synthetic_plan(*kept, done)
    assert (
        await validate_plan(PlanCheckRequest(plan=valid, catalog=catalog, max_nodes=5))
    ).issues == []
