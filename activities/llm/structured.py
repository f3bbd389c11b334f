"""The shapes a model must answer in (a plan, a verdict), as strict JSON schemas, and their parsing.

One schema serves both APIs' structured outputs: every object lists all its properties as
required and forbids others (OpenAI's strict mode), and no keyword outside the subset both APIs
constrain decoding with. A literal argument travels as JSON text (`value_json`), because a strict
schema cannot describe "any JSON value". A reply that does not parse or fit is a ProviderError
with INVALID_MODEL_OUTPUT: a VALIDATION failure that the run replans from.

Parsing is tolerant of what servers without constrained decoding (or with a loose one) send: a
`<think>` block before the answer (closed or not), prose around the JSON, the JSON in a fence
anywhere, and raw control characters inside JSON strings. The answer is the last JSON object in
the reply that fits the shape.
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
from harness.core.usage import TokenUsage
from scenarios.base import PlanningError

_THINKING = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL)
_THINKING_TAG = re.compile(r"</?think(?:ing)?>")
_SHOWN_CHARS = 120
_MAX_OBJECT_STARTS = 64
"""How many `{` a reply is searched from for a JSON object: enough for prose around one, few
enough that a long reply cut short is not decoded again from each of its braces."""
# Raw control characters (a newline, a tab) inside JSON strings are accepted, as a loose
# constrained decoder emits them: `strict=False` reads them as the characters they are.
_DECODER = json.JSONDecoder(strict=False)

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

# The shapes by example, for a server that constrains no decoding (the prompt carries them).
_EXAMPLE_LOOKUP = NodeDraft(
    id="lookup",
    tool="TOOL_NAME",
    arguments=[
        BindingDraft(name="ARGUMENT", kind="LITERAL", value_json='"value"', node_id=None, path=None)
    ],
    deps=[],
)
_EXAMPLE_REPORT = NodeDraft(
    id="report",
    tool="FINAL_SYNTHESIS_TOOL_NAME",
    arguments=[
        BindingDraft(
            name="ARGUMENT", kind="NODE_RESULT", value_json=None, node_id="lookup", path=None
        )
    ],
    deps=["lookup"],
)
PLAN_EXAMPLE = PlanDraft(
    nodes=[_EXAMPLE_LOOKUP, _EXAMPLE_REPORT], cannot_plan=None
).model_dump_json()
VERDICT_EXAMPLE = VerdictDraft(
    passed=False, score=0.5, reasons=["The report names one city of the two."]
).model_dump_json()


class ModelCannotPlanError(PlanningError):
    """The model answered `cannot_plan`: a CANNOT_PLAN failure, planned once more before the
    user is asked (a scenario's own planner raises PlanningError: MISSING_INFO, asked at once).
    `usage`: what the call that said it cost, so that the run is charged for it."""

    def __init__(self, message: str, usage: TokenUsage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


def parse_plan(text: str) -> Plan:
    """The plan in a planner's reply; PlanningError when the model says no plan can work."""
    draft = _parse(PlanDraft, text, "a plan")
    if draft.cannot_plan and not draft.nodes:
        raise ModelCannotPlanError(f"the planner cannot plan this goal: {draft.cannot_plan}")
    return draft.plan()


def parse_verdict(text: str) -> VerdictDraft:
    verdict = _parse(VerdictDraft, text, "a verdict")
    if not 0 <= verdict.score <= 1:
        raise ProviderError(
            ErrorCode.INVALID_MODEL_OUTPUT, f"the judge's score {verdict.score} is not in [0, 1]"
        )
    return verdict


def _parse(shape: type[Draft], text: str, what: str) -> Draft:
    candidates = _json_objects(text)
    for candidate in reversed(candidates):
        try:
            return shape.model_validate(candidate)
        except ValidationError:
            continue
    shown = text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"
    raise ProviderError(
        ErrorCode.INVALID_MODEL_OUTPUT,
        f"the model's reply is not {what} ({_problems(shape, candidates, text)}); "
        f"it began: {shown!r}",
    )


def _problems(shape: type[Draft], candidates: list[dict[str, Any]], text: str) -> str:
    """Why the reply does not fit: the problems of its last JSON object (the likeliest answer),
    or why it is no JSON at all."""
    try:
        if candidates:
            shape.model_validate(candidates[-1])
        else:
            shape.model_validate_json(text)
    except ValidationError as error:
        return describe_invalid(error, whole="reply")
    return "it holds no JSON object"


def _json_objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects in a reply, in order: the whole reply when it is one, else each one found
    in it (in a fence or in prose); a model's thinking left out."""
    answer = _THINKING.sub("", text)
    if "</think" in answer:  # the opening tag was in the prompt (a chat template's)
        answer = re.split(r"</think(?:ing)?>", answer)[-1]
    answer = _THINKING_TAG.sub("", answer).strip()  # thinking never closed: the JSON ends it
    whole = _whole_object(answer)
    return [whole] if whole is not None else _objects_within(answer)


def _whole_object(text: str) -> dict[str, Any] | None:
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _objects_within(text: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    start, tries = text.find("{"), 0
    while start != -1 and tries < _MAX_OBJECT_STARTS:
        tries += 1
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        start = text.find("{", end)
    return found
