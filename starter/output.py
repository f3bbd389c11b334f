"""How the CLI prints results: a report and one summary line, or JSON for machines."""

from __future__ import annotations

import json
import sys
from typing import Any

from harness.catalog.tools import ToolCatalog, ToolSpec
from harness.engine.run import RunResult, RunStatus
from harness.engine.validation import ValidationIssue


def emit_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def note(message: str) -> None:
    """Progress and hints go to stderr so stdout stays clean for reports and JSON."""
    print(message, file=sys.stderr)


def summary_line(result: RunResult) -> str:
    counts = result.counts
    return (
        f"{result.status.value} · run {result.run_id} · {counts.nodes} nodes: {counts.done} done, "
        f"{counts.failed} failed, {counts.skipped} skipped · attempts {result.attempts} · "
        f"{result.wall_seconds:.2f} s"
    )


def models_line(result: RunResult) -> str | None:
    """Which models did each role's work (a switch under pressure shows as two)."""
    roles = [
        f"{role} {', '.join(usage.models)}"
        for role, usage in result.usage_by_role.items()
        if usage.models
    ]
    return "models: " + " · ".join(roles) if roles else None


def print_result(result: RunResult) -> None:
    if result.report:
        print(result.report)
        print()
    if result.error:
        print(f"error: {result.error}")
    if models := models_line(result):
        print(models)
    print(summary_line(result))


def print_status(status: RunStatus) -> None:
    counts = status.counts
    print(
        f"run {status.run_id}: {status.phase.value} (attempt {status.attempt}) · "
        f"{counts.done} done, {counts.failed} failed, {counts.skipped} skipped of {counts.nodes}"
        f" · pressure {status.budget.pressure:.2f}"
    )
    for node in status.nodes:
        latency = f"{node.latency_ms:.0f} ms" if node.latency_ms is not None else ""
        error = f" {node.error_code}: {node.error_message}" if node.error_code else ""
        print(f"  {node.id:<24} {node.tool:<20} {node.status.value:<8} {latency:>9}{error}")


def print_issues(issues: list[ValidationIssue]) -> None:
    for issue in issues:
        print(issue.describe())
    print(f"{len(issues)} problem(s)" if issues else "plan is valid")


def print_catalog(catalog: ToolCatalog) -> None:
    print(f"scenario {catalog.scenario}: {len(catalog.tools)} tools")
    for tool in catalog.tools:
        print(f"\n{tool.name}  [{tool.role.value}]{_rules(tool)}")
        print(f"  {tool.description}")
        required = set(tool.required_arguments())
        properties: dict[str, Any] = tool.arguments_schema.get("properties", {})
        for name, schema in properties.items():
            marker = "" if name in required else " (optional)"
            print(f"  - {name}: {_type_name(schema)}{marker}")


def _rules(tool: ToolSpec) -> str:
    """What the run does around a call: side effects, approval, retry, and where it runs."""
    notes = []
    if tool.side_effects:
        notes.append("side effects")
        notes.append("retried" if tool.idempotent else "runs once")
    if tool.requires_approval:
        notes.append("always needs approval")
    if tool.mcp is not None:
        notes.append(f"MCP {tool.mcp.server}/{tool.mcp.tool}")
    return "".join(f"  {note}" for note in notes)


def _type_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if schema.get("type") == "array":
        return f"list[{_type_name(schema.get('items', {}))}]"
    if "anyOf" in schema:
        return " | ".join(_type_name(option) for option in schema["anyOf"])
    return str(schema.get("type", "any"))
