"""A plan is a DAG of tool calls: `deps` give the order, NODE_RESULT arguments the data flow."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field, JsonValue


class ArgumentKind(StrEnum):
    LITERAL = "LITERAL"
    NODE_RESULT = "NODE_RESULT"


class ArgumentBinding(BaseModel):
    """One argument of a node: a literal value, or (part of) the result of another node."""

    name: str
    kind: ArgumentKind
    value: JsonValue = None
    node_id: str | None = None
    path: str | None = Field(
        default=None,
        description="Dotted path into the referenced node's result, e.g. 'population', 'items.0'.",
    )

    @classmethod
    def literal(cls, name: str, value: JsonValue) -> ArgumentBinding:
        return cls(name=name, kind=ArgumentKind.LITERAL, value=value)

    @classmethod
    def node_result(cls, name: str, node_id: str, path: str | None = None) -> ArgumentBinding:
        return cls(name=name, kind=ArgumentKind.NODE_RESULT, node_id=node_id, path=path)


class PlanNode(BaseModel):
    """One step of a plan: a call of `tool` with its arguments, after the nodes in `deps`."""

    id: str
    tool: str
    arguments: list[ArgumentBinding] = Field(default_factory=list)
    deps: list[str] = Field(default_factory=list)


class Plan(BaseModel):
    """What a planner returns: a DAG of tool calls, ending in one final-synthesis node."""

    nodes: list[PlanNode] = Field(default_factory=list)

    def node(self, node_id: str) -> PlanNode | None:
        return next((node for node in self.nodes if node.id == node_id), None)

    def node_ids(self) -> list[str]:
        return [node.id for node in self.nodes]
