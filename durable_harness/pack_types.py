"""What a pack's functions receive and return: the planning input of its offline planner, the
check input of its report check and rubric, the outcome its eval check sees, and its completion
gates. Beside the run-time model of a tool (`runtime`), so a pack and the built-in scenarios
import them from the public package without a loop. Imports the domain only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue

from harness.catalog.tools import ToolCatalog
from harness.core.errors import FailureContext
from harness.core.plan import ArgumentBinding, Plan, PlanNode
from harness.governance.gates import GateInput

__all__ = [
    "AcceptanceCheck",
    "AcceptanceFunction",
    "ArgumentBinding",
    "CheckInput",
    "CheckVerdict",
    "Environment",
    "OfflinePlanner",
    "OutcomeCheck",
    "OutcomeInput",
    "Plan",
    "PlanNode",
    "PlanningError",
    "PlanningInput",
    "ReportCheck",
    "Rubric",
    "default_rubric",
]


class PlanningError(Exception):
    """The offline planner cannot make a plan from this goal; the message says what is missing."""


Environment = Mapping[str, str]


@dataclass(frozen=True)
class PlanningInput:
    goal: str
    catalog: ToolCatalog
    attempt: int
    failures: list[FailureContext]
    previous_plan: Plan | None
    bound_to_task: bool = False
    work_notes: tuple[str, ...] = ()
    """What the run's task asks of it: the rules in force and the reviewers' comments."""
    carried_tools: tuple[str, ...] = ()
    """A repair run: the tools whose results the task already holds, carried forward from the
    submission sent back (a side effect among them is not to be done again)."""
    remembered_missing: tuple[str, ...] = ()
    """Entities that earlier runs of this scenario found no data for (episodic memory in the
    planner's context): a plan need not look them up again."""


OfflinePlanner = Callable[[PlanningInput], Plan]
"""A pack's deterministic planner, used by the offline provider."""


@dataclass(frozen=True)
class CheckInput:
    goal: str
    report: str
    results: dict[str, JsonValue]


ReportCheck = Callable[[CheckInput], list[str]]
"""A pack's deterministic check of a final report: the problems it finds, none when it passes."""


@dataclass(frozen=True)
class OutcomeInput:
    """What an eval's outcome check sees of a finished run."""

    run_id: str
    goal: str
    status: str
    report: str | None
    results: dict[str, JsonValue]
    """The results of the run's DONE nodes, by node id."""

    @property
    def succeeded(self) -> bool:
        return self.status == "SUCCEEDED"


OutcomeCheck = Callable[[OutcomeInput, Mapping[str, object]], Awaitable[list[str]]]
"""An eval's check of a finished run against the scenario's own truth (its data, or the external
system it acted on), with the worker's services: the problems it finds."""


@dataclass(frozen=True)
class Rubric:
    """What the critic judges a report by: criteria in words, and facts it should repeat."""

    criteria: list[str]
    evidence_terms: list[str] = field(default_factory=list)


def default_rubric(check: CheckInput) -> Rubric:
    return Rubric(criteria=["the report answers the goal using only facts from the tool results"])


@dataclass(frozen=True)
class CheckVerdict:
    passed: bool
    reason: str


AcceptanceFunction = Callable[[GateInput, Mapping[str, object]], Awaitable[CheckVerdict]]
"""Judges a task's submission (and the evidence it references), with the worker's services."""


@dataclass(frozen=True)
class AcceptanceCheck:
    """A completion gate in code, which a contract or a rule can require by its id."""

    id: str
    description: str
    judge: AcceptanceFunction
