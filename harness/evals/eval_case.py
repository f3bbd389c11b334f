"""Eval cases: a goal, how to run it, and what its run must show, as a case file states them.

A case file holds the cases of one scenario (`scenarios/NAME/eval_cases.yaml`). Every model here
refuses a field it does not know, so a typo in a case is an error that names the field instead
of an expectation that silently never runs.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.core.actors import ActorKind, parse_actor
from harness.core.errors import ErrorCode
from harness.core.limits import MAX_NAME_CHARS
from harness.core.plan import Plan
from harness.engine.bounds import MAX_ANSWER_CHARS, MAX_COMMENT_CHARS
from harness.engine.budget import BudgetLimits
from harness.engine.contracts import EVAL_ACTOR, PROVIDER_NAMES
from harness.engine.faults import FaultSpec
from harness.engine.run import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_REPLANS,
    MemoryOptions,
    RunPhase,
    RunRequest,
)
from harness.engine.validation import IssueCode
from harness.waits.wait_book import WaitKind

CASE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
DEFAULT_EVAL_ACTOR = EVAL_ACTOR
"""An eval's scripted responses come from a system unless a case names a person."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScriptedDecision(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"


def _speaking_actor(actor: str) -> str:
    """An eval speaks as a person or a system; an agent never approves or answers for a run."""
    kind, _ = parse_actor(actor)
    if kind is ActorKind.AGENT:
        raise ValueError(f"'{actor}': an eval answers as human:NAME or system:NAME, never agent:")
    return actor


class ScriptedApproval(_Strict):
    """The decision for the run's next APPROVAL wait (or the one named by `wait`)."""

    decision: ScriptedDecision = ScriptedDecision.APPROVE
    actor: str = Field(default=DEFAULT_EVAL_ACTOR, max_length=MAX_NAME_CHARS)
    comment: str | None = Field(default=None, max_length=MAX_COMMENT_CHARS)
    wait: str | None = Field(
        default=None, max_length=MAX_NAME_CHARS, description="Only the wait with this id."
    )

    _actor = field_validator("actor")(_speaking_actor)


class ScriptedAnswer(_Strict):
    """The answer to the run's next USER_INPUT wait (or the one named by `wait`)."""

    text: str = Field(min_length=1, max_length=MAX_ANSWER_CHARS)
    actor: str = Field(default=DEFAULT_EVAL_ACTOR, max_length=MAX_NAME_CHARS)
    wait: str | None = Field(default=None, max_length=MAX_NAME_CHARS)

    _actor = field_validator("actor")(_speaking_actor)


class CaseLimits(_Strict):
    max_tokens: int | None = Field(default=None, gt=0)
    max_tool_calls: int | None = Field(default=None, gt=0)
    max_seconds: float | None = Field(default=None, gt=0)
    max_cost_usd: float | None = Field(default=None, gt=0)


class CaseOptions(_Strict):
    """How the case's run is started: the fields of `harness run` a case may set."""

    max_replans: int | None = Field(default=None, ge=0, le=20)
    max_concurrency: int | None = Field(default=None, ge=1, le=10_000)
    limits: CaseLimits = Field(default_factory=CaseLimits)
    faults: list[str] = Field(
        default_factory=list, description="TOOL[:ARG]=CODE[*N], as `harness run --fault`."
    )
    provider: str | None = None
    plan: Plan | None = Field(default=None, description="A fixed plan: skips the planner.")
    plan_file: str | None = Field(
        default=None, description="A plan JSON file, relative to the case file."
    )
    ask_user: bool = True
    memory: bool = Field(
        default=False,
        description="Off by default, so what earlier runs left in memory never changes a case.",
    )
    answers: list[ScriptedAnswer] = Field(default_factory=list)
    approvals: list[ScriptedApproval] = Field(default_factory=list)

    @field_validator("faults")
    @classmethod
    def _faults_parse(cls, faults: list[str]) -> list[str]:
        for fault in faults:
            FaultSpec.parse(fault)
        return faults

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, provider: str | None) -> str | None:
        if provider is not None and provider not in PROVIDER_NAMES:
            raise ValueError(f"unknown provider '{provider}'; one of {', '.join(PROVIDER_NAMES)}")
        return provider

    @model_validator(mode="after")
    def _one_plan(self) -> CaseOptions:
        if self.plan is not None and self.plan_file is not None:
            raise ValueError("give `plan` or `plan_file`, not both")
        return self


class CaseExpectations(_Strict):
    """What the run must show. Every field left out is not checked."""

    status: RunPhase | list[RunPhase] = RunPhase.SUCCEEDED
    mentions: list[str] = Field(
        default_factory=list, description="Text the report must contain, ignoring case."
    )
    not_mentions: list[str] = Field(default_factory=list)
    min_replans: int | None = Field(default=None, ge=0)
    max_replans: int | None = Field(default=None, ge=0)
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    validation_codes: list[IssueCode] = Field(
        default_factory=list, description="Codes the validator must have given some plan."
    )
    error_codes: list[ErrorCode] = Field(
        default_factory=list, description="Codes some node or attempt must have failed with."
    )
    retried_tools: list[str] = Field(
        default_factory=list, description="Tools some node of which took more than one attempt."
    )
    waits: list[WaitKind] = Field(
        default_factory=list, description="Kinds of wait the run must have opened."
    )
    scenario_check: bool = Field(
        default=True, description="The scenario's own outcome check must hold."
    )
    min_judge_score: float | None = Field(default=None, ge=0, le=1)

    def statuses(self) -> list[RunPhase]:
        return self.status if isinstance(self.status, list) else [self.status]


class EvalCase(_Strict):
    id: Annotated[str, Field(description="Unique in its scenario: lowercase, digits and '-'.")]
    goal: str = Field(min_length=1, max_length=10_000)
    scenario: str = Field(default="", description="Set from the case file.")
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    options: CaseOptions = Field(default_factory=CaseOptions)
    expect: CaseExpectations = Field(default_factory=CaseExpectations)

    @field_validator("id")
    @classmethod
    def _id_form(cls, value: str) -> str:
        if not CASE_ID.match(value):
            raise ValueError(f"'{value}' is not a case id (lowercase letters, digits and '-')")
        return value

    @property
    def key(self) -> str:
        """The case's name across a suite: scenario/id."""
        return f"{self.scenario}/{self.id}"

    def run_request(self, provider: str | None = None) -> RunRequest:
        """The run this case starts; `provider` (the eval's --provider) wins over the case's."""
        options = self.options
        limits = BudgetLimits(**options.limits.model_dump())
        return RunRequest(
            goal=self.goal,
            scenario=self.scenario,
            limits=limits,
            plan=options.plan,
            provider=provider or options.provider,
            faults=[FaultSpec.parse(fault) for fault in options.faults],
            ask_user=options.ask_user,
            memory=MemoryOptions(enabled=options.memory),
            max_replans=_or(options.max_replans, DEFAULT_MAX_REPLANS),
            max_concurrency=_or(options.max_concurrency, DEFAULT_MAX_CONCURRENCY),
        )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


class CaseFile(_Strict):
    """One file of cases: `scenario`, then `cases`."""

    scenario: str
    description: str | None = None
    cases: list[EvalCase] = Field(min_length=1)

    @model_validator(mode="after")
    def _cases_of_this_scenario(self) -> CaseFile:
        seen: set[str] = set()
        for case in self.cases:
            if case.scenario and case.scenario != self.scenario:
                raise ValueError(
                    f"case '{case.id}' names scenario '{case.scenario}' in a file of "
                    f"'{self.scenario}'; a case file holds one scenario's cases"
                )
            case.scenario = self.scenario
            if case.id in seen:
                raise ValueError(f"case id '{case.id}' is used twice")
            seen.add(case.id)
        return self
