"""The pure domain of durable-harness: plans, tools, validation, DAG bookkeeping, run models.

Nothing here knows about Temporal, LLM SDKs or I/O.
"""

from harness.budget import Budget, BudgetLimits, BudgetSnapshot, BudgetUsage
from harness.dag import DagState, NodeStatus
from harness.errors import ErrorClass, ErrorCode, FailureContext, ToolError, classify
from harness.plan import ArgumentBinding, ArgumentKind, Plan, PlanNode
from harness.run import (
    NodeOutcome,
    RunPhase,
    RunRequest,
    RunResult,
    RunStatus,
    Verdict,
)
from harness.tools import ToolCatalog, ToolRole, ToolSpec
from harness.trace import TraceEvent, TraceKind
from harness.usage import TokenUsage
from harness.validation import IssueCode, ValidationIssue, validate_plan

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
