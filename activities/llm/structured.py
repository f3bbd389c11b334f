"""The shapes a model must answer in (a plan, a verdict), as strict JSON schemas, and their parsing.

One schema serves both APIs' structured outputs: every object lists all its properties as
required and forbids others (OpenAI's strict mode), and no keyword outside the subset both APIs
constrain decoding with. A literal argument travels as JSON text (`value_json`), because a strict
schema cannot describe "any JSON value". A reply that does not parse or fit is a ProviderError
with INVALID_MODEL_OUTPUT: a VALIDATION failure that the run replans from.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from activities.llm.base import ProviderError
from harness.core.errors import ErrorCode
from harness.core.plan import ArgumentBinding, ArgumentKind, Plan, PlanNode
from harness.core.problems import describe_invalid
from scenarios.base import PlanningError

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_SHOWN_CHARS = 120

Draft = TypeVar("Draft", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BindingDraft(_Strict):
    name: str = Field(description="The argument's name in the tool's argument schema.")
    kind: Literal["LITERAL", "NODE_RESULT"]
    value_json: str | None = Field(
        description="LITERAL: the value as JSON text, e.g. "
        '"\\"Paris\\"", "3", "[\\"a\\", \\"b\\"]". NODE_RESULT: null.'
    )
    node_id: str | None = Field(
        description="NODE_RESULT: the node whose result is bound; it must be in deps."
        " LITERAL: null."
    )
    path: str | None = Field(
        description="NODE_RESULT: a dotted path to a field the tool's Result names (e.g. 'city',"
        " 'items.0'), or null for the whole result. LITERAL: null."
    )

    @classmethod
    def of(cls, binding: ArgumentBinding) -> BindingDraft:
        literal = binding.kind is ArgumentKind.LITERAL
        return cls(
            name=binding.name,
            kind=binding.kind.value,
            value_json=json.dumps(binding.value) if literal else None,
            node_id=binding.node_id,
            path=binding.path,
        )

    def binding(self) -> ArgumentBinding:
        if self.kind == "NODE_RESULT":
            return ArgumentBinding(
                name=self.name, kind=ArgumentKind.NODE_RESULT, node_id=self.node_id, path=self.path
            )
        return ArgumentBinding.literal(self.name, _literal(self.value_json))


def _literal(text: str | None) -> JsonValue:
    """The value of `value_json`; text that is not JSON is taken as the string it spells."""
    if text is None:
        return None
    try:
        value: JsonValue = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value


class NodeDraft(_Strict):
    id: str = Field(description="Unique, short snake_case id, e.g. 'pop_paris'.")
    tool: str = Field(description="A tool name from the catalog.")
    arguments: list[BindingDraft]
    deps: list[str] = Field(description="Ids of the nodes that must finish before this one.")


class PlanDraft(_Strict):
    nodes: list[NodeDraft] = Field(description="The plan's nodes; the final-synthesis node last.")
    cannot_plan: str | None = Field(
        description="Only when no plan over these tools can reach the goal: why, in one sentence"
        " (and nodes is empty). Otherwise null."
    )

    @classmethod
    def of(cls, plan: Plan) -> PlanDraft:
        nodes = [
            NodeDraft(
                id=node.id,
                tool=node.tool,
                arguments=[BindingDraft.of(binding) for binding in node.arguments],
                deps=node.deps,
            )
            for node in plan.nodes
        ]
        return cls(nodes=nodes, cannot_plan=None)

    def plan(self) -> Plan:
        nodes = [
            PlanNode(
                id=node.id,
                tool=node.tool,
                arguments=[draft.binding() for draft in node.arguments],
                deps=node.deps,
            )
            for node in self.nodes
        ]
        return Plan(nodes=nodes)


class VerdictDraft(_Strict):
    passed: bool = Field(description="True only when the report meets every criterion.")
    score: float = Field(description="From 0 (misses the goal) to 1 (fully meets it).")
    reasons: list[str] = Field(
        description="Short sentences: each criterion missed, or why it passed."
    )


PLAN_SCHEMA: dict[str, Any] = PlanDraft.model_json_schema()
VERDICT_SCHEMA: dict[str, Any] = VerdictDraft.model_json_schema()


def parse_plan(text: str) -> Plan:
    """The plan in a planner's reply; PlanningError when the model says no plan can work."""
    draft = _parse(PlanDraft, text, "a plan")
    if draft.cannot_plan and not draft.nodes:
        raise PlanningError(f"the planner cannot plan this goal: {draft.cannot_plan}")
    return draft.plan()


def parse_verdict(text: str) -> VerdictDraft:
    verdict = _parse(VerdictDraft, text, "a verdict")
    if not 0 <= verdict.score <= 1:
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT, f"the judge's score {verdict.score} is not in [0, 1]"
        )
    return verdict


def _parse(shape: type[Draft], text: str, what: str) -> Draft:
    fenced = _FENCE.match(text)
    try:
        return shape.model_validate_json(fenced.group(1) if fenced else text)
    except ValidationError as error:
        problems = describe_invalid(error, whole="reply")
        shown = text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT,
            f"the model's reply is not {what} ({problems}); it began: {shown!r}",
        ) from None
