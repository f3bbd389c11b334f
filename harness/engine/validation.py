"""Plan validation: pure code that returns every problem of a plan, not just the first."""

from __future__ import annotations

import difflib

from harness.catalog.tools import ToolCatalog, ToolRole, ToolSpec
from harness.core.plan import ArgumentKind, Plan, PlanNode
from harness.engine.agent_node import AGENT_TOOL, agent_node_issues
from harness.engine.argument_rules import argument_issues
from harness.engine.dag import find_cycles
from harness.engine.result_paths import path_problem
from harness.engine.validation_issues import IssueCode, ValidationIssue, ValidationReport

__all__ = ["DEFAULT_MAX_NODES", "IssueCode", "ValidationIssue", "ValidationReport", "validate_plan"]

DEFAULT_MAX_NODES = 1000


def validate_plan(
    plan: Plan,
    catalog: ToolCatalog,
    max_nodes: int = DEFAULT_MAX_NODES,
    *,
    check_paths: bool = True,
) -> list[ValidationIssue]:
    """Every problem of `plan` against `catalog`; an empty list means the plan may run.
    `check_paths`: NODE_RESULT paths are checked against result schemas (workflow code passes
    False to a run that validated before the check existed, so its replay decides alike)."""
    if not plan.nodes:
        return [ValidationIssue(code=IssueCode.EMPTY_PLAN, message="the plan has no nodes")]
    issues: list[ValidationIssue] = []
    if len(plan.nodes) > max_nodes:
        issues.append(
            ValidationIssue(
                code=IssueCode.TOO_MANY_NODES,
                message=f"the plan has {len(plan.nodes)} nodes; the limit is {max_nodes}",
            )
        )
    issues += _duplicate_ids(plan)
    known_ids = set(plan.node_ids())
    tools_of = {node.id: node.tool for node in plan.nodes}
    specs = catalog.by_name()  # not `get` per node: each scans the catalog
    for node in plan.nodes:
        tool = specs.get(node.tool)
        if tool is None:
            issues.append(_unknown_tool(node, catalog))
        else:
            issues += _node_argument_issues(node, tool, catalog)
            if tool.requires_task:
                message = (
                    f"tool '{node.tool}' may only run in a run bound to a task (the scope's "
                    "contract: task_required_tools); start the run with --task"
                )
                issues.append(
                    ValidationIssue(code=IssueCode.TASK_REQUIRED, node_id=node.id, message=message)
                )
        issues += _dependency_issues(node, known_ids)
        issues += _binding_issues(node, known_ids)
        if check_paths:
            issues += _path_issues(node, tools_of, specs)
    issues += _cycle_issues(plan)
    issues += _final_synthesis_issues(plan, catalog)
    return issues


def _node_argument_issues(
    node: PlanNode, tool: ToolSpec, catalog: ToolCatalog
) -> list[ValidationIssue]:
    """An agent node meets the agent rules (its listed tools too), any other node its tool's
    argument schema. The agent rules run only where the catalog has an `agent` tool: no catalog
    has one yet (issue 36 adds it with the loop), so until then an `agent` node is an unknown
    tool, as it always was, and every plan validates as before."""
    if tool.name == AGENT_TOOL:
        return agent_node_issues(node, catalog)
    return argument_issues(node, tool)


def _duplicate_ids(plan: Plan) -> list[ValidationIssue]:
    seen: set[str] = set()
    issues = []
    for node in plan.nodes:
        if node.id in seen:
            issues.append(
                ValidationIssue(
                    code=IssueCode.DUPLICATE_NODE_ID,
                    node_id=node.id,
                    message=f"node id '{node.id}' is used more than once; ids must be unique",
                )
            )
        seen.add(node.id)
    return issues


def _unknown_tool(node: PlanNode, catalog: ToolCatalog) -> ValidationIssue:
    message = f"tool '{node.tool}' is not in the catalog"
    close = difflib.get_close_matches(node.tool, catalog.names(), n=1)
    if close:
        message += f"; did you mean '{close[0]}'?"
    else:
        message += f"; available tools: {', '.join(catalog.names())}"
    return ValidationIssue(code=IssueCode.UNKNOWN_TOOL, node_id=node.id, message=message)


def _dependency_issues(node: PlanNode, known_ids: set[str]) -> list[ValidationIssue]:
    issues = []
    for dep in node.deps:
        if dep == node.id:
            issues.append(
                ValidationIssue(
                    code=IssueCode.SELF_DEPENDENCY,
                    node_id=node.id,
                    message=f"node '{node.id}' depends on itself",
                )
            )
        elif dep not in known_ids:
            issues.append(
                ValidationIssue(
                    code=IssueCode.UNKNOWN_DEPENDENCY,
                    node_id=node.id,
                    message=f"dependency '{dep}' is not a node of the plan",
                )
            )
    return issues


def _binding_issues(node: PlanNode, known_ids: set[str]) -> list[ValidationIssue]:
    issues = []
    for binding in node.arguments:
        if binding.kind is not ArgumentKind.NODE_RESULT:
            continue
        source = binding.node_id
        if source is None or source not in known_ids:
            issues.append(
                ValidationIssue(
                    code=IssueCode.NODE_RESULT_UNKNOWN_NODE,
                    node_id=node.id,
                    message=f"argument '{binding.name}' reads the result of '{source}', "
                    "which is not a node of the plan",
                )
            )
        elif source not in node.deps:
            issues.append(
                ValidationIssue(
                    code=IssueCode.NODE_RESULT_NOT_IN_DEPS,
                    node_id=node.id,
                    message=f"argument '{binding.name}' reads the result of '{source}'; "
                    f"add '{source}' to the deps of '{node.id}'",
                )
            )
    return issues


def _path_issues(
    node: PlanNode, tools_of: dict[str, str], specs: dict[str, ToolSpec]
) -> list[ValidationIssue]:
    """A NODE_RESULT path that its source's tool's result schema rules out (a tool that
    declares none is not checked)."""
    issues = []
    for binding in node.arguments:
        if binding.kind is not ArgumentKind.NODE_RESULT or binding.node_id not in tools_of:
            continue
        tool = specs.get(tools_of[binding.node_id])
        if tool is None or tool.result_schema is None:
            continue
        problem = path_problem(tool.result_schema, binding.path)
        if problem is not None:
            issues.append(
                ValidationIssue(
                    code=IssueCode.NODE_RESULT_BAD_PATH,
                    node_id=node.id,
                    message=f"argument '{binding.name}' reads path '{binding.path}' of "
                    f"'{binding.node_id}' ({tool.name}), but {problem}",
                )
            )
    return issues


def _cycle_issues(plan: Plan) -> list[ValidationIssue]:
    return [
        ValidationIssue(
            code=IssueCode.CYCLE,
            node_id=cycle[0],
            message="dependency cycle: " + " -> ".join([*cycle, cycle[0]]),
        )
        for cycle in find_cycles(plan)
    ]


def _final_synthesis_issues(plan: Plan, catalog: ToolCatalog) -> list[ValidationIssue]:
    finals = catalog.final_synthesis_nodes(plan)
    if len(finals) != 1:
        names = ", ".join(node.id for node in finals) or "none"
        final_tools = [t.name for t in catalog.tools if t.role is ToolRole.FINAL_SYNTHESIS]
        return [
            ValidationIssue(
                code=IssueCode.FINAL_SYNTHESIS_COUNT,
                message=f"a plan needs exactly one final-synthesis node "
                f"({', '.join(final_tools) or 'no such tool in the catalog'}); found {names}",
            )
        ]
    final = finals[0]
    issues = []
    dependents = [node.id for node in plan.nodes if final.id in node.deps]
    if dependents:
        issues.append(
            ValidationIssue(
                code=IssueCode.FINAL_SYNTHESIS_NOT_LAST,
                node_id=final.id,
                message=f"the final-synthesis node must be last, but {', '.join(dependents)} "
                "depend on it",
            )
        )
    unreached = _unreached_from(plan, final)
    if unreached:
        issues.append(
            ValidationIssue(
                code=IssueCode.FINAL_SYNTHESIS_NOT_LAST,
                node_id=final.id,
                message=f"the final-synthesis node does not reach {', '.join(unreached)} "
                "through its deps; their results would never reach the report",
            )
        )
    return issues


def _unreached_from(plan: Plan, final: PlanNode) -> list[str]:
    by_id = {node.id: node for node in plan.nodes}
    reached = {final.id}
    frontier = list(final.deps)
    while frontier:
        node_id = frontier.pop()
        if node_id in reached or node_id not in by_id:
            continue
        reached.add(node_id)
        frontier.extend(by_id[node_id].deps)
    return [node.id for node in plan.nodes if node.id not in reached]
