"""The argument rules every node's bindings meet against its tool's argument schema: known
names (with did-you-mean), one binding each (an array argument takes several), every required
argument bound, and each literal valid against its schema."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import JsonValue

from harness.catalog.schema_check import schema_problems
from harness.catalog.tools import ToolSpec
from harness.core.plan import ArgumentKind, PlanNode
from harness.engine.binding import is_array_argument
from harness.engine.validation_issues import IssueCode, ValidationIssue


def argument_issues(node: PlanNode, tool: ToolSpec) -> list[ValidationIssue]:
    """Every problem of `node`'s bindings against the arguments `tool` takes."""
    issues: list[ValidationIssue] = []
    allowed = tool.argument_names()
    properties = tool.arguments_schema.get("properties", {})
    seen: set[str] = set()
    for binding in node.arguments:
        if binding.name in seen and not is_array_argument(tool, binding.name):
            issues.append(
                ValidationIssue(
                    code=IssueCode.DUPLICATE_ARGUMENT,
                    node_id=node.id,
                    message=f"argument '{binding.name}' is bound more than once",
                )
            )
        seen.add(binding.name)
        if binding.name not in allowed:
            issues.append(_unknown_argument(node, tool, binding.name))
        elif binding.kind is ArgumentKind.LITERAL:
            for problem in _literal_problems(binding.value, tool, properties[binding.name]):
                issues.append(
                    ValidationIssue(
                        code=IssueCode.INVALID_ARGUMENT,
                        node_id=node.id,
                        message=f"argument '{binding.name}' of {tool.name}: {problem}",
                    )
                )
    for required in tool.required_arguments():
        if required not in seen:
            issues.append(
                ValidationIssue(
                    code=IssueCode.MISSING_REQUIRED_ARGUMENT,
                    node_id=node.id,
                    message=f"{tool.name} needs argument '{required}'",
                )
            )
    return issues


def _literal_problems(value: JsonValue, tool: ToolSpec, schema: dict[str, Any]) -> list[str]:
    """Check a literal; a single item bound to an array argument is checked as an item."""
    item_schema = _array_items(schema)
    if item_schema is not None and not isinstance(value, list):
        return schema_problems(value, item_schema, tool.arguments_schema)
    return schema_problems(value, schema, tool.arguments_schema)


def _array_items(schema: dict[str, Any]) -> dict[str, Any] | None:
    for option in [schema, *schema.get("anyOf", [])]:
        if isinstance(option, dict) and option.get("type") == "array":
            items = option.get("items")
            return items if isinstance(items, dict) else {}
    return None


def _unknown_argument(node: PlanNode, tool: ToolSpec, name: str) -> ValidationIssue:
    allowed = tool.argument_names()
    message = f"{tool.name} has no argument '{name}'"
    close = difflib.get_close_matches(name, allowed, n=1)
    if close:
        message += f"; did you mean '{close[0]}'?"
    elif allowed:
        message += f"; it takes {', '.join(allowed)}"
    else:
        message += "; it takes no arguments"
    return ValidationIssue(code=IssueCode.UNKNOWN_ARGUMENT, node_id=node.id, message=message)
