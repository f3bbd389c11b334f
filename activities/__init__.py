"""Activities: everything with I/O. Names are fixed strings, never changed once released."""

from activities.cancellation import cancel_own_run
from activities.catalog import CatalogActivities
from activities.checks import check_report, validate_plan
from activities.judge import JudgeActivities
from activities.planner import PlannerActivities
from activities.task_ledger import TaskLedgerActivities
from activities.tool_runner import ToolActivities

__all__ = [
    "CatalogActivities",
    "JudgeActivities",
    "PlannerActivities",
    "TaskLedgerActivities",
    "ToolActivities",
    "cancel_own_run",
    "check_report",
    "validate_plan",
]
