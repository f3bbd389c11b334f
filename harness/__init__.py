"""The pure domain of durable-harness: the rules a run and the work around it follow.

Nothing here knows about Temporal, LLM SDKs or I/O: pydantic and the standard library only. One
sub-package a domain, imports running one way (tests/test_layout.py holds them to it):

- `harness.core`: the words every domain shares: plans, actors, errors, usage, redaction.
- `harness.catalog`: tools: the catalog, MCP tools, what a tool may ask of a model.
- `harness.governance`: work that outlives a run: tasks, ledgers, scopes, rules, gates.
- `harness.recall`: memory: stored records and the planner's context.
- `harness.waits`: durable waits: what a run waits for and what may answer it.
- `harness.engine`: the run: its request and result, state, plan validation, DAG, budget.
- `harness.evals`: eval cases, their scoring and the report.

The names below are the package's front door, re-exported from the sub-packages.
"""

from harness.catalog.tools import ToolCatalog, ToolRole, ToolSpec
from harness.core.errors import ErrorClass, ErrorCode, FailureContext, ToolError, classify
from harness.core.plan import ArgumentBinding, ArgumentKind, Plan, PlanNode
from harness.core.usage import TokenUsage
from harness.engine.budget import Budget, BudgetLimits, BudgetSnapshot, BudgetUsage
from harness.engine.dag import DagState, NodeStatus
from harness.engine.run import (
    NodeOutcome,
    RunPhase,
    RunRequest,
    RunResult,
    RunStatus,
    Verdict,
)
from harness.engine.trace import TraceEvent, TraceKind
from harness.engine.validation import IssueCode, ValidationIssue, validate_plan

__all__ = [
    "ArgumentBinding",
    "ArgumentKind",
    "Budget",
    "BudgetLimits",
    "BudgetSnapshot",
    "BudgetUsage",
    "DagState",
    "ErrorClass",
    "ErrorCode",
    "FailureContext",
    "IssueCode",
    "NodeOutcome",
    "NodeStatus",
    "Plan",
    "PlanNode",
    "RunPhase",
    "RunRequest",
    "RunResult",
    "RunStatus",
    "TokenUsage",
    "ToolCatalog",
    "ToolError",
    "ToolRole",
    "ToolSpec",
    "TraceEvent",
    "TraceKind",
    "ValidationIssue",
    "Verdict",
    "classify",
    "validate_plan",
]
