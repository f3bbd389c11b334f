"""A scope's contract and its lessons, behind one gateway (the LEARN loop).

A failure leaves a fact; anyone may propose a lesson from it (a decision: the question and the
proposal, with the fact and the evidence it rests on); an entitled actor resolves it; a person
(or a system, where the contract allows) promotes an ACCEPTED lesson into a rule. A rule can be
revoked; the rule, its lesson, the fact and the evidence stay readable: that is its lineage.

As in `harness.governance.task_ledger`, `check` is an update's validator and `apply` its handler: a
refused
command changes nothing and leaves no event in history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from harness.core.actors import ActorKind, parse_actor
from harness.core.limits import MAX_NAME_CHARS
from harness.governance.governance_keys import MAX_KEYS, identities, key_change_problem
from harness.governance.host_contract import (
    BUILT_IN_GATES,
    Contract,
    ContractInForce,
    Rule,
    RuleKind,
    did_you_mean,
    in_force,
    name_problem,
)
from harness.governance.state_size import (
    Tally,
    actor_kind,
    actor_problem,
    growth_estimate,
    json_bytes,
    names_problem,
)
from harness.governance.task_commands import (
    ForScope,
    GovernanceCommand,
    IdempotencyKeys,
    LedgerReceipt,
)
from harness.governance.task_graph import CreateTask, GraphCommand
from harness.governance.work import TEXT, Decision, DecisionStatus

MAX_LESSONS = 1000
MAX_RULES_BYTES = 400_000
"""The most a scope's contract, lessons and rules take as JSON. They travel through
continue-as-new with the scope's graph (harness.governance.task_graph.MAX_GRAPH_BYTES) as one
payload,
which Temporal refuses past 2 MB: together about 1 MB. About 225 lessons with 500-character
texts fit (33 with 50 evidence references each)."""


class SetContract(BaseModel):
    op: Literal["set_contract"] = "set_contract"
    contract: Contract


class ProposeLesson(BaseModel):
    op: Literal["propose_lesson"] = "propose_lesson"
    fact: str = TEXT
    """What went wrong, e.g. 'a chargeback on A-1001: the dispute status was not checked'."""
    evidence: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=50, description="e.g. TASK/ev-3, run:RUN/node:NODE."
    )
    task_id: str | None = Field(default=None, max_length=200)
    question: str = TEXT
    proposal: str = TEXT


class ResolveLesson(BaseModel):
    op: Literal["resolve_lesson"] = "resolve_lesson"
    lesson_id: str
    accept: bool
    reason: str = TEXT


class PromoteLesson(BaseModel):
    op: Literal["promote_lesson"] = "promote_lesson"
    lesson_id: str
    kind: RuleKind
    target: str = Field(min_length=1, max_length=100, description="A check id or a tool name.")
    preset: str | None = Field(default=None, max_length=100)


class RevokeRule(BaseModel):
    op: Literal["revoke_rule"] = "revoke_rule"
    rule_id: str
    reason: str = TEXT


class SetKeys(BaseModel):
    """Replace the scope's actor keys (actor -> Ed25519 public key, base64); {} turns them off.
    The first keys are set by a person among them, signed with their key; later changes are
    signed by a person keyed already (harness.governance.governance_keys)."""

    op: Literal["set_keys"] = "set_keys"
    keys: dict[
        Annotated[str, Field(min_length=1, max_length=200)],
        Annotated[str, Field(min_length=1, max_length=100)],
    ] = Field(max_length=MAX_KEYS)


RulesOperation = Annotated[
    SetContract | ProposeLesson | ResolveLesson | PromoteLesson | RevokeRule | SetKeys,
    Field(discriminator="op"),
]


class RulesCommand(GovernanceCommand, ForScope):
    operation: RulesOperation


class Lesson(BaseModel):
    """A fact, the evidence that shows it, the decision proposed from it, and the rule it
    became (if it did): the lineage a rule keeps after it is revoked."""

    id: str
    fact: str
    evidence: list[str] = Field(default_factory=list)
    task_id: str | None = None
    decision: Decision
    rule_id: str | None = None

    @property
    def status(self) -> DecisionStatus:
        return self.decision.status


class ScopeRulesState(BaseModel):
    contract: Contract = Field(default_factory=Contract)
    contract_set_by: str | None = None
    contract_set_at: datetime | None = None
    lessons: list[Lesson] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
    keys: dict[str, str] = Field(default_factory=dict)
    key_ids: dict[str, str | None] = Field(default_factory=dict)
    actor_keys: dict[str, str] = Field(
        default_factory=dict,
        description="0.10: actor identity -> Ed25519 public key (base64); empty: unkeyed.",
    )
    actor_keys_set_by: str | None = None
    actor_keys_set_at: datetime | None = None


class InForceRequest(BaseModel):
    """The input of a scope's contract query: for tasks of which preset."""

    preset: str | None = None


class ScopeRules:
    def __init__(self, scope: str, state: ScopeRulesState) -> None:
        self.scope = scope
        self.state = state
        self._tally = Tally(lambda: json_bytes(self.state))

    @property
    def size(self) -> int:
        """Bytes of the contract, lessons and rules as JSON, as continue-as-new carries them."""
        return self._tally.bytes

    def in_force(self, preset: str | None) -> ContractInForce:
        return in_force(self.state.contract, self.state.rules, self.scope, preset)

    def preset_problem(self, command: GraphCommand) -> str | None:
        """Creating a task: its preset is one the contract names (fail closed), and chosen by
        a person or a system, never by an agent (the preset picks the gates it is held to)."""
        operation = command.operation
        if not isinstance(operation, CreateTask) or operation.preset is None:
            return None
        if parse_actor(command.actor)[0] is ActorKind.AGENT:
            return "an agent cannot choose a task's preset: its contract is the host's"
        return self.state.contract.preset_problem(operation.preset)

    # -- the gateway ------------------------------------------------------------------------

    def check(self, command: RulesCommand) -> str | None:
        if command.scope != self.scope:
            return f"the command is for scope '{command.scope[:200]}', not '{self.scope}'"
        problem = actor_problem(command.actor)
        if problem is not None:
            return problem
        keys = self._keys()
        if keys.seen(command.idempotency_key):
            return keys.problem(command.idempotency_key, command.fingerprint())
        operation = command.operation
        ids = {name: getattr(operation, name, None) for name in ("lesson_id", "rule_id")}
        problem = names_problem(ids, MAX_NAME_CHARS)
        problem = problem or self._rule_problem(command, actor_kind(command.actor))
        return problem or self._size_problem(command)

    def _size_problem(self, command: RulesCommand) -> str | None:
        """Refused before it is journalled: the rules stay far below Temporal's limit."""
        if self.size + growth_estimate(command, command.idempotency_key) <= MAX_RULES_BYTES:
            return None
        return (
            f"scope '{self.scope}' is full ({self.size:,} of {MAX_RULES_BYTES:,} bytes of "
            "contract, lessons and rules): keep lessons short, or use a new scope"
        )

    def _rule_problem(self, command: RulesCommand, kind: ActorKind) -> str | None:
        operation = command.operation
        if isinstance(operation, SetContract):
            if kind is not ActorKind.HUMAN:
                return "only a person sets a scope's contract: it is the host's, not a run's"
            problems = operation.contract.problems()
            return "; ".join(problems) if problems else None
        if isinstance(operation, ProposeLesson):
            if len(self.state.lessons) >= MAX_LESSONS:
                return f"scope '{self.scope}' holds {MAX_LESSONS} lessons, the most it may"
            return None
        if isinstance(operation, ResolveLesson):
            return self._resolve_problem(operation, kind)
        if isinstance(operation, PromoteLesson):
            return self._promote_problem(operation, kind)
        if isinstance(operation, SetKeys):
            return key_change_problem(self.state.actor_keys, command.actor, operation.keys)
        return self._revoke_problem(operation, kind)

    def apply(
        self, command: RulesCommand, now: datetime, *, checked: bool = False
    ) -> LedgerReceipt:
        """`checked`: an update's validator already ran the check (see TaskLedger.apply)."""
        problem = None if checked else self.check(command)
        if problem is not None:
            return LedgerReceipt(accepted=False, reason=problem)
        content = command.fingerprint()
        operation, state = command.operation, self.state
        touched: list[BaseModel | None] = []
        if isinstance(operation, ResolveLesson | PromoteLesson):
            touched.append(self.lesson(operation.lesson_id))
        elif isinstance(operation, RevokeRule):
            touched.append(self.rule(operation.rule_id))
        self._tally.changing(
            touched=[record for record in touched if record is not None],
            lists=(state.lessons, state.rules),
            maps=(state.keys, state.key_ids),
        )
        receipt = self._keys().once(
            command.idempotency_key, content, lambda: self._apply(command, now)
        )
        self._tally.changed()
        if isinstance(operation, SetContract | SetKeys):  # replaced whole: measured again
            self._tally.forget()
        return receipt

    def _keys(self) -> IdempotencyKeys:
        return IdempotencyKeys(self.state.keys, self.state.key_ids)

    # -- checks -----------------------------------------------------------------------------

    def _promotion_refusal(self, kind: ActorKind, act: str) -> str | None:
        if kind is ActorKind.AGENT:
            return f"an agent can never {act} a rule, whatever the contract says"
        if kind is ActorKind.SYSTEM and not self.state.contract.allow_system_promotion:
            return (
                f"the contract of scope '{self.scope}' has allow_system_promotion off: only a "
                f"person may {act} a rule here"
            )
        return None

    def _resolve_problem(self, operation: ResolveLesson, kind: ActorKind) -> str | None:
        if kind is ActorKind.AGENT:
            return "an agent can never resolve a lesson: it proposes, an entitled actor decides"
        lesson = self.lesson(operation.lesson_id)
        if lesson is None:
            return self._no_lesson(operation.lesson_id)
        if lesson.status is not DecisionStatus.PROPOSED:
            return f"lesson '{lesson.id}' was already {lesson.status.value}"
        return None

    def _promote_problem(self, operation: PromoteLesson, kind: ActorKind) -> str | None:
        refusal = self._promotion_refusal(kind, "promote")
        if refusal:
            return refusal
        lesson = self.lesson(operation.lesson_id)
        if lesson is None:
            return self._no_lesson(operation.lesson_id)
        if lesson.status is not DecisionStatus.ACCEPTED:
            status = lesson.status.value
            return f"lesson '{lesson.id}' is {status}: only an ACCEPTED lesson is promoted"
        if lesson.rule_id is not None:
            return f"lesson '{lesson.id}' is already rule '{lesson.rule_id}'"
        what = "check" if operation.kind is RuleKind.REQUIRE_ACCEPTANCE_CHECK else "tool"
        problem = name_problem(operation.target, what)
        if problem:
            return problem
        if (
            operation.kind is RuleKind.REQUIRE_ACCEPTANCE_CHECK
            and operation.target in BUILT_IN_GATES
        ):
            return f"'{operation.target}' is a built-in gate: the contract's own flag turns it on"
        if operation.preset is not None:
            if operation.kind.is_tool_rule:
                return (
                    "tool rules are global: whether a tool needs approval or a task does not "
                    "depend on the task type, so a tool rule takes no preset"
                )
            known = sorted(self.state.contract.presets)
            if operation.preset not in known:
                return (
                    f"the contract of scope '{self.scope}' has no preset '{operation.preset}'"
                    f"{did_you_mean(operation.preset, known)}"
                )
        return None

    def _revoke_problem(self, operation: RevokeRule, kind: ActorKind) -> str | None:
        refusal = self._promotion_refusal(kind, "revoke")
        if refusal:
            return refusal
        rule = self.rule(operation.rule_id)
        if rule is None:
            hint = did_you_mean(operation.rule_id, [r.id for r in self.state.rules])
            return f"scope '{self.scope}' has no rule '{operation.rule_id}'{hint}"
        if rule.revoked:
            return f"rule '{rule.id}' was already revoked by {rule.revoked_by}"
        return None

    def _no_lesson(self, lesson_id: str) -> str:
        known = [lesson.id for lesson in self.state.lessons]
        return f"scope '{self.scope}' has no lesson '{lesson_id}'{did_you_mean(lesson_id, known)}"

    def lesson(self, lesson_id: str) -> Lesson | None:
        return next((item for item in self.state.lessons if item.id == lesson_id), None)

    def rule(self, rule_id: str) -> Rule | None:
        return next((item for item in self.state.rules if item.id == rule_id), None)

    # -- changes ----------------------------------------------------------------------------

    def _apply(self, command: RulesCommand, now: datetime) -> tuple[str | None, str]:
        operation, actor, state = command.operation, command.actor, self.state
        if isinstance(operation, SetContract):
            state.contract = operation.contract
            state.contract_set_by, state.contract_set_at = actor, now
            return self.scope, "contract set"
        if isinstance(operation, ProposeLesson):
            lesson_id = f"lesson-{len(state.lessons) + 1}"
            lesson = Lesson(
                id=lesson_id,
                fact=operation.fact,
                evidence=operation.evidence,
                task_id=operation.task_id,
                decision=Decision(
                    id=lesson_id,
                    question=operation.question,
                    proposal=operation.proposal,
                    proposed_by=actor,
                    proposed_at=now,
                ),
            )
            state.lessons.append(lesson)
            return lesson.id, "lesson proposed"
        if isinstance(operation, ResolveLesson):
            resolved = self.lesson(operation.lesson_id)
            assert resolved is not None  # checked
            resolved.decision.resolve(operation.accept, actor, now, operation.reason)
            return resolved.id, f"lesson {resolved.status.value}"
        if isinstance(operation, PromoteLesson):
            promoted = self.lesson(operation.lesson_id)
            assert promoted is not None  # checked
            rule = Rule(
                id=f"rule-{len(state.rules) + 1}",
                kind=operation.kind,
                target=operation.target,
                preset=operation.preset,
                lesson_id=promoted.id,
                promoted_by=actor,
                promoted_at=now,
            )
            state.rules.append(rule)
            promoted.rule_id = rule.id
            return rule.id, f"rule in force: {rule.describe()}"
        if isinstance(operation, SetKeys):
            state.actor_keys = identities(operation.keys)
            state.actor_keys_set_by, state.actor_keys_set_at = actor, now
            return self.scope, f"{len(state.actor_keys)} actor key(s) in force"
        revoked = self.rule(operation.rule_id)
        assert revoked is not None  # checked
        revoked.revoked, revoked.revoked_by, revoked.revoked_at = True, actor, now
        revoked.revoke_reason = operation.reason
        return revoked.id, "rule revoked; its record and lineage stay"
