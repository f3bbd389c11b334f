"""The tool catalog: what a planner may call, with each tool's argument schema and role."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, JsonValue

from harness.plan import Plan, PlanNode

RESERVED_TOOL_PREFIX = "harness_"
"""No scenario's or server's own tool takes a name that starts with this: the management tools
have it."""


class ToolRole(StrEnum):
    """DATA tools gather or transform facts; the single FINAL_SYNTHESIS tool writes the report."""

    DATA = "DATA"
    FINAL_SYNTHESIS = "FINAL_SYNTHESIS"


class ToolCompletion(StrEnum):
    """SYNC tools return their result; ASYNC_OPERATION tools start an external operation, return
    `{"operation_id": ...}`, and the run waits for the result to be delivered."""

    SYNC = "SYNC"
    ASYNC_OPERATION = "ASYNC_OPERATION"


class NativeWait(StrEnum):
    """Tools the workflow itself carries out as a durable wait, with no activity."""

    TIMER = "TIMER"
    EXTERNAL_EVENT = "EXTERNAL_EVENT"


class McpTarget(BaseModel):
    """Where an MCP tool runs: the server the worker is configured with, and the tool's own name
    there (the catalog's name may carry a prefix)."""

    server: str
    tool: str
    writes: bool = Field(
        default=True,
        description="The tool has side effects: a call cut off mid-way has an unknown outcome "
        "(assumed of a catalog that does not say).",
    )


class ToolSpec(BaseModel):
    name: str
    description: str
    arguments_schema: dict[str, Any] = Field(
        description="JSON schema of the tool's arguments, derived from its pydantic model."
    )
    role: ToolRole = ToolRole.DATA
    cost_hint: float = Field(default=1.0, ge=0, description="Relative cost of one call.")
    side_effects: bool = False
    idempotent: bool = Field(
        default=False,
        description="Calling again with the same arguments in the same run and node does the "
        "side effect at most once (an idempotency key), so a failed call may be retried.",
    )
    probes_outcome: bool = Field(
        default=False,
        description="The tool can ask the system it acts on what became of a call whose outcome "
        "is uncertain, before a person is asked to reconcile it.",
    )
    reconcile_example: JsonValue = Field(
        default=None,
        description="The result a person delivers to reconcile an uncertain call, with the "
        "call's argument names in capitals (and OPERATION_ID) as placeholders.",
    )
    uses_llm: bool = False
    requires_approval: bool = False
    requires_task: bool = Field(
        default=False,
        description="The scope's contract lets this tool run only in a run bound to a task.",
    )
    completion: ToolCompletion = ToolCompletion.SYNC
    native_wait: NativeWait | None = None
    local: bool = Field(
        default=False,
        description="A cheap in-memory tool: runs as a local activity (one history marker, no "
        "task-queue round trip) instead of a regular activity.",
    )
    mcp: McpTarget | None = Field(
        default=None,
        description="The tool is served by an MCP server: the worker calls it there.",
    )

    @classmethod
    def from_model(
        cls,
        name: str,
        description: str,
        arguments: type[BaseModel],
        *,
        role: ToolRole = ToolRole.DATA,
        cost_hint: float = 1.0,
        side_effects: bool = False,
        idempotent: bool = False,
        probes_outcome: bool = False,
        reconcile_example: JsonValue = None,
        uses_llm: bool = False,
        requires_approval: bool = False,
        completion: ToolCompletion = ToolCompletion.SYNC,
        native_wait: NativeWait | None = None,
        local: bool = False,
    ) -> ToolSpec:
        return cls(
            name=name,
            description=description,
            arguments_schema=arguments.model_json_schema(),
            role=role,
            cost_hint=cost_hint,
            side_effects=side_effects,
            idempotent=idempotent,
            probes_outcome=probes_outcome,
            reconcile_example=reconcile_example,
            uses_llm=uses_llm,
            requires_approval=requires_approval,
            completion=completion,
            native_wait=native_wait,
            local=local,
        )

    def argument_names(self) -> list[str]:
        return list(self.arguments_schema.get("properties", {}))

    def required_arguments(self) -> list[str]:
        return list(self.arguments_schema.get("required", []))


class ToolCatalog(BaseModel):
    scenario: str
    tools: list[ToolSpec]

    def get(self, name: str) -> ToolSpec | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def names(self) -> list[str]:
        return [tool.name for tool in self.tools]

    def final_synthesis_nodes(self, plan: Plan) -> list[PlanNode]:
        """The plan's nodes whose tool writes the report; a valid plan has exactly one."""
        # one look-up table, not `get` per node (a scan of the catalog: 0.7 s for 20,000 nodes
        # on a loaded machine); the first tool of a name counts, as `get` finds it
        first: dict[str, ToolSpec] = {}
        for tool in self.tools:
            first.setdefault(tool.name, tool)
        writers = {name for name, tool in first.items() if tool.role is ToolRole.FINAL_SYNTHESIS}
        return [node for node in plan.nodes if node.tool in writers]

    def final_synthesis_node(self, plan: Plan) -> PlanNode | None:
        finals = self.final_synthesis_nodes(plan)
        return finals[0] if finals else None
