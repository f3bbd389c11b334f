"""The tool catalog: what a planner may call, with each tool's argument schema and role."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, JsonValue

from harness.core.plan import Plan, PlanNode

RESERVED_TOOL_PREFIX = "harness_"
"""No scenario's or server's own tool takes a name that starts with this: the management tools
have it."""

RESERVED_TOOL_NAMES = frozenset({"write_report", "agent"})
"""The built-in tools every catalog is to have (the final report writer, an agent node): no
scenario's, pack's or server's own tool takes these names."""


def reserved_name_reason(name: str) -> str | None:
    """Why a tool of one's own may not be called `name` (none: it may)."""
    if name.startswith(RESERVED_TOOL_PREFIX):
        return f"names starting with '{RESERVED_TOOL_PREFIX}' are the harness's own"
    if name in RESERVED_TOOL_NAMES:
        return f"'{name}' is the name of a built-in tool"
    return None


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


DEFAULT_TOOL_ATTEMPTS = 3
DEFAULT_TOOL_BACKOFF_SECONDS = 1.0
MAX_TOOL_ATTEMPTS = 10
MAX_TOOL_TIMEOUT_SECONDS = 3600.0
MAX_TOOL_BACKOFF_SECONDS = 60.0
"""The ranges a tool's own retry settings may take (checked where a catalog is listed, by
`retry_problems`): a tool may ask for fewer attempts or a shorter wait than the defaults, or for
more, within bounds that keep one call from holding a run for hours."""


class CallPolicy(BaseModel):
    """How one admitted call is made: the attempts it reserved from the run's tool-call budget
    (its tool's, or fewer when the budget has fewer left), how long each may take (none: the
    house default) and the wait before the first retry."""

    max_attempts: int = Field(ge=1)
    timeout_seconds: float | None = None
    backoff_seconds: float = DEFAULT_TOOL_BACKOFF_SECONDS


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
    # Left out of the payload while unset, as the retry settings below: the built-in tools
    # declare none, so their catalogs (in history, and in the planner's prompt) stay as before.
    result_schema: dict[str, Any] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="JSON schema of the tool's result, when the tool declares one (a typed "
        "function's return type): what a NODE_RESULT path into it may name.",
    )
    # The three retry settings are left out of a catalog's payload while they hold their
    # defaults, so catalogs (in every run's history, and in the planner's prompt) stay as before.
    max_attempts: int = Field(
        default=DEFAULT_TOOL_ATTEMPTS,
        exclude_if=lambda value: value == DEFAULT_TOOL_ATTEMPTS,
        description="Attempts of one call, the first included, while its failures are "
        "retryable; every attempt counts against the run's tool-call budget. A side effect "
        "that is not idempotent runs once whatever this says.",
    )
    timeout_seconds: float | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="How long one attempt may take; none: 120 s (10 s for a local tool).",
    )
    backoff_seconds: float = Field(
        default=DEFAULT_TOOL_BACKOFF_SECONDS,
        exclude_if=lambda value: value == DEFAULT_TOOL_BACKOFF_SECONDS,
        description="The wait before the first retry; each next wait doubles, up to 30 s "
        "(or this, when longer).",
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
        max_attempts: int = DEFAULT_TOOL_ATTEMPTS,
        timeout_seconds: float | None = None,
        backoff_seconds: float = DEFAULT_TOOL_BACKOFF_SECONDS,
        result: type[BaseModel] | None = None,
    ) -> ToolSpec:
        """A spec from the tool's argument model and, when given, its result model (its JSON
        schema as the result is dumped: what a NODE_RESULT path may name)."""
        result_schema = result.model_json_schema(mode="serialization") if result else None
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
            max_attempts=max_attempts,
            timeout_seconds=timeout_seconds,
            backoff_seconds=backoff_seconds,
            result_schema=result_schema,
        )

    def attempts_per_call(self) -> int:
        """The attempts one call may make: a side effect that is not idempotent runs once, a
        native wait makes no call (and counts as one), anything else as its spec says."""
        if self.native_wait is not None or (self.side_effects and not self.idempotent):
            return 1
        return min(max(self.max_attempts, 1), MAX_TOOL_ATTEMPTS)

    def call_policy(self, attempts: int) -> CallPolicy:
        """The policy of a call that reserved `attempts`. A setting out of range (refused where
        catalogs are listed, so only a catalog from elsewhere has one) falls back to its
        default here: workflow code builds its retry policy from this and must not fail."""
        timeout = self.timeout_seconds
        in_range = timeout is not None and 0 < timeout <= MAX_TOOL_TIMEOUT_SECONDS
        backoff = self.backoff_seconds
        return CallPolicy(
            max_attempts=max(attempts, 1),
            timeout_seconds=timeout if in_range else None,
            backoff_seconds=backoff
            if 0 < backoff <= MAX_TOOL_BACKOFF_SECONDS
            else DEFAULT_TOOL_BACKOFF_SECONDS,
        )

    def retry_problems(self) -> list[str]:
        """What is out of range in the tool's retry settings, one line each (none: fine).
        Comparisons only, no arithmetic: NaN and huge numbers are refused, never raised on."""
        problems = []
        if not 1 <= self.max_attempts <= MAX_TOOL_ATTEMPTS:
            problems.append(
                f"tool '{self.name}': max_attempts is {_shown(self.max_attempts)}; "
                f"use 1 to {MAX_TOOL_ATTEMPTS}"
            )
        timeout = self.timeout_seconds
        if timeout is not None and not 0 < timeout <= MAX_TOOL_TIMEOUT_SECONDS:
            problems.append(
                f"tool '{self.name}': timeout_seconds is {_shown(timeout)}; "
                f"use more than 0 and at most {MAX_TOOL_TIMEOUT_SECONDS:g}"
            )
        if not 0 < self.backoff_seconds <= MAX_TOOL_BACKOFF_SECONDS:
            problems.append(
                f"tool '{self.name}': backoff_seconds is {_shown(self.backoff_seconds)}; "
                f"use more than 0 and at most {MAX_TOOL_BACKOFF_SECONDS:g}"
            )
        return problems

    def argument_names(self) -> list[str]:
        return list(self.arguments_schema.get("properties", {}))

    def required_arguments(self) -> list[str]:
        return list(self.arguments_schema.get("required", []))


def _shown(value: float) -> str:
    """A number for a message; one too long to print (str() of an int past 4,300 digits
    raises) is named by its size."""
    if isinstance(value, int) and not -(10**9) < value < 10**9:
        return "-1000000000 or less" if value < 0 else "1000000000 or more"
    return str(value)


class ToolCatalog(BaseModel):
    scenario: str
    tools: list[ToolSpec]

    def get(self, name: str) -> ToolSpec | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def by_name(self) -> dict[str, ToolSpec]:
        """Every tool by its name, the first of a name as `get` finds it: one look-up table for
        a loop over a plan's nodes (`get` per node scans the catalog, 0.12 ms a call in the
        workflow sandbox: a quarter of a 1,000-node fan-out's replay)."""
        first: dict[str, ToolSpec] = {}
        for tool in self.tools:
            first.setdefault(tool.name, tool)
        return first

    def names(self) -> list[str]:
        return [tool.name for tool in self.tools]

    def retry_problems(self) -> list[str]:
        """Every tool's out-of-range retry settings (see ToolSpec.retry_problems)."""
        return [problem for tool in self.tools for problem in tool.retry_problems()]

    def final_synthesis_nodes(self, plan: Plan) -> list[PlanNode]:
        """The plan's nodes whose tool writes the report; a valid plan has exactly one."""
        # one look-up table, not `get` per node (a scan of the catalog: 0.7 s for 20,000 nodes
        # on a loaded machine)
        first = self.by_name()
        writers = {name for name, tool in first.items() if tool.role is ToolRole.FINAL_SYNTHESIS}
        return [node for node in plan.nodes if node.tool in writers]

    def final_synthesis_node(self, plan: Plan) -> PlanNode | None:
        finals = self.final_synthesis_nodes(plan)
        return finals[0] if finals else None
