"""The host's contract for a scope: which tools need a task or an approval, which completion
gates a task must pass, and which acts a `system:` actor may do in place of a person. Presets
are contracts per task type; promoted lessons (rules) add to them.

Everything here only tightens: the contract in force for a task is the base contract, its
preset's gates, and every rule in force, merged as a union. No rule and no run option can
relax it, and an `agent:` actor may never approve, complete, reconcile or promote, whatever it
says (that is the gateway's, in `harness.governance.task_ledger`, `harness.governance.scope_rules`
and the runs).
"""

from __future__ import annotations

import difflib
import re
from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.catalog.tools import ToolCatalog
from harness.core.actors import ActorKind

DEFAULT_SCOPE = "default"
"""The scope a run that names none is held to (and the CLI's default scope)."""
APPROVED_REVIEW_GATE = "approved-review"
EVIDENCE_GATE = "completion-evidence"
PRESET_GATE = "preset"
BUILT_IN_GATES = (APPROVED_REVIEW_GATE, EVIDENCE_GATE)
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$")
MAX_NAMES = 200


def name_problem(name: str, what: str) -> str | None:
    if NAME_PATTERN.match(name):
        return None
    return f"{what} '{name}' must be 1-100 letters, digits, '-', '_', '.' or ':'"


def did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


class Act(StrEnum):
    """What a contract may keep for people: each has its `allow_system_*` flag."""

    APPROVAL = "approval"
    COMPLETION = "completion"
    RECONCILIATION = "reconciliation"
    PROMOTION = "promotion"


class Preset(BaseModel):
    """A contract for one task type: the gates it adds to the base contract's (a preset only
    tightens; tool rules are global, never per preset)."""

    model_config = ConfigDict(extra="forbid")

    requires_approved_review: bool = Field(
        default=False, description="True: required for this type even where the base is off."
    )
    requires_completion_evidence: bool = False
    required_checks: list[str] = Field(default_factory=list, max_length=MAX_NAMES)


class Contract(BaseModel):
    """The host's rules for one scope. Unknown fields are errors, so a typo never loosens it."""

    model_config = ConfigDict(extra="forbid")

    task_required_tools: list[str] = Field(
        default_factory=list,
        max_length=MAX_NAMES,
        description="Tools that may only run in a run bound to a task.",
    )
    approval_required_tools: list[str] = Field(
        default_factory=list,
        max_length=MAX_NAMES,
        description="Tools that wait for approval, whether or not they ask for it.",
    )
    requires_approved_review: bool = True
    requires_completion_evidence: bool = True
    required_checks: list[str] = Field(
        default_factory=list,
        max_length=MAX_NAMES,
        description="Acceptance checks (gates registered in code) every task must pass.",
    )
    allow_system_approval: bool = True
    allow_system_completion: bool = True
    allow_system_reconciliation: bool = True
    allow_system_promotion: bool = False
    presets: dict[str, Preset] = Field(default_factory=dict, max_length=MAX_NAMES)
    unknown_preset: Literal["refuse", "base"] = Field(
        default="refuse",
        description="A task whose preset the contract does not name: refused (fail closed), "
        "or held to the base contract.",
    )

    def problems(self) -> list[str]:
        found: list[str] = []
        for name in [*self.task_required_tools, *self.approval_required_tools]:
            found += [p for p in [name_problem(name, "tool")] if p]
        for name in self.presets:
            found += [p for p in [name_problem(name, "preset")] if p]
        checks = [*self.required_checks]
        for preset in self.presets.values():
            checks += preset.required_checks
        for name in checks:
            found += [p for p in [name_problem(name, "check")] if p]
            if name in BUILT_IN_GATES:
                found.append(f"'{name}' is a built-in gate: its own requires_* flag turns it on")
        return found

    def preset_problem(self, preset: str | None) -> str | None:
        """Why a task with this preset cannot be held to this contract (fail closed)."""
        if preset is None or preset in self.presets or self.unknown_preset == "base":
            return None
        known = sorted(self.presets)
        listed = f" (presets: {', '.join(known)})" if known else " (it names no presets)"
        return f"the contract has no preset '{preset}'{did_you_mean(preset, known)}{listed}"


class RuleKind(StrEnum):
    REQUIRE_ACCEPTANCE_CHECK = "REQUIRE_ACCEPTANCE_CHECK"
    REQUIRE_APPROVAL_FOR_TOOL = "REQUIRE_APPROVAL_FOR_TOOL"
    REQUIRE_TASK_FOR_TOOL = "REQUIRE_TASK_FOR_TOOL"

    @property
    def is_tool_rule(self) -> bool:
        return self is not RuleKind.REQUIRE_ACCEPTANCE_CHECK


class Rule(BaseModel):
    """A promoted lesson: it binds every later run and task in its scope until revoked."""

    id: str
    kind: RuleKind
    target: str = Field(description="The check id, or the tool name.")
    preset: str | None = Field(default=None, description="Only tasks of this preset.")
    lesson_id: str
    promoted_by: str
    promoted_at: datetime
    revoked: bool = False
    revoked_by: str | None = None
    revoked_at: datetime | None = None
    revoke_reason: str | None = None

    def describe(self) -> str:
        what = {
            RuleKind.REQUIRE_ACCEPTANCE_CHECK: f"the acceptance check '{self.target}' must pass",
            RuleKind.REQUIRE_APPROVAL_FOR_TOOL: f"'{self.target}' waits for approval",
            RuleKind.REQUIRE_TASK_FOR_TOOL: f"'{self.target}' runs only in a run bound to a task",
        }[self.kind]
        where = f" (preset {self.preset})" if self.preset else ""
        return f"{self.id}{where}: {what}"


class ContractInForce(BaseModel):
    """The contract one task (or run) is held to: the base, its preset, the rules in force."""

    scope: str
    preset: str | None = None
    preset_problem: str | None = Field(
        default=None, description="The preset is unknown: every completion is refused."
    )
    task_required_tools: list[str] = Field(default_factory=list)
    approval_required_tools: list[str] = Field(default_factory=list)
    requires_approved_review: bool = True
    requires_completion_evidence: bool = True
    required_checks: list[str] = Field(default_factory=list)
    allow_system_approval: bool = True
    allow_system_completion: bool = True
    allow_system_reconciliation: bool = True
    allow_system_promotion: bool = False
    rules: list[Rule] = Field(default_factory=list, description="The rules in force here.")

    def allows_system(self, act: Act) -> bool:
        return {
            Act.APPROVAL: self.allow_system_approval,
            Act.COMPLETION: self.allow_system_completion,
            Act.RECONCILIATION: self.allow_system_reconciliation,
            Act.PROMOTION: self.allow_system_promotion,
        }[act]

    def humans_only(self) -> frozenset[Act]:
        """The acts this contract keeps for people."""
        return frozenset(act for act in Act if not self.allows_system(act))

    def refusal(self, kind: ActorKind, act: Act) -> str | None:
        """Why this kind of actor may not do this act here, or None."""
        if kind is ActorKind.AGENT:
            return f"an agent can never do {act.value}, whatever the contract says"
        if kind is ActorKind.SYSTEM and not self.allows_system(act):
            return (
                f"the contract of scope '{self.scope}' has allow_system_{act.value} off: "
                f"only a person may do {act.value} here"
            )
        return None

    def gates(self) -> list[str]:
        """Every gate a completion evaluates, in order."""
        gates = [PRESET_GATE] if self.preset_problem else []
        if self.requires_approved_review:
            gates.append(APPROVED_REVIEW_GATE)
        if self.requires_completion_evidence:
            gates.append(EVIDENCE_GATE)
        return gates + [c for c in self.required_checks if c not in gates]

    def planning_notes(self) -> list[str]:
        """What a planner must satisfy, in words."""
        notes = [f"rule {rule.describe()}" for rule in self.rules]
        notes += [
            f"contract: the acceptance check '{check}' must pass"
            for check in self.required_checks
            if not any(r.target == check for r in self.rules)
        ]
        notes += [
            f"contract: '{tool}' waits for approval"
            for tool in self.approval_required_tools
            if not any(r.target == tool for r in self.rules)
        ]
        return notes


def held_to(catalog: ToolCatalog, contract: ContractInForce, bound: bool) -> ToolCatalog:
    """The catalog a run is held to by its contract: tools it names wait for approval, and in a
    run bound to no task, tools that need a task cannot be planned. Only ever tighter."""
    approval = set(contract.approval_required_tools)
    task_only = set(contract.task_required_tools) if not bound else set()
    tools = [
        spec.model_copy(
            update={
                "requires_approval": spec.requires_approval or spec.name in approval,
                "requires_task": spec.requires_task or spec.name in task_only,
            }
        )
        for spec in catalog.tools
    ]
    return catalog.model_copy(update={"tools": tools})


def in_force(
    contract: Contract, rules: list[Rule], scope: str, preset: str | None
) -> ContractInForce:
    """The union of the base contract, the task's preset and every unrevoked rule that applies
    to it. A rule only adds: there is no rule that removes anything."""
    live = [r for r in rules if not r.revoked and (r.preset is None or r.preset == preset)]
    chosen = contract.presets.get(preset) if preset is not None else None
    problem = contract.preset_problem(preset)

    def union(*lists: list[str]) -> list[str]:
        return sorted({name for names in lists for name in names})

    def by(kind: RuleKind) -> list[str]:
        return [r.target for r in live if r.kind is kind]

    review = contract.requires_approved_review
    evidence = contract.requires_completion_evidence
    checks = union(contract.required_checks, by(RuleKind.REQUIRE_ACCEPTANCE_CHECK))
    if chosen is not None:
        review = review or chosen.requires_approved_review
        evidence = evidence or chosen.requires_completion_evidence
        checks = union(checks, chosen.required_checks)
    return ContractInForce(
        scope=scope,
        preset=preset,
        preset_problem=problem,
        task_required_tools=union(contract.task_required_tools, by(RuleKind.REQUIRE_TASK_FOR_TOOL)),
        approval_required_tools=union(
            contract.approval_required_tools, by(RuleKind.REQUIRE_APPROVAL_FOR_TOOL)
        ),
        requires_approved_review=review,
        requires_completion_evidence=evidence,
        required_checks=checks,
        allow_system_approval=contract.allow_system_approval,
        allow_system_completion=contract.allow_system_completion,
        allow_system_reconciliation=contract.allow_system_reconciliation,
        allow_system_promotion=contract.allow_system_promotion,
        rules=live,
    )
