"""Agent nodes: a plan node whose tool is the built-in `agent` runs a bounded tool-use loop.

What such a node takes (`AgentArguments`), the rules its bindings meet before a run starts
(`agent_node_issues`, run by the plan validator) and what the loop returns (`AgentResult`).
The loop itself is the child workflow's; its conversation and allowance are in
`agent_conversation` and `agent_allowance`.
"""

from __future__ import annotations

import difflib
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.agent_turns import ToolCall
from harness.catalog.tools import (
    RESERVED_TOOL_PREFIX,
    ToolCatalog,
    ToolCompletion,
    ToolRole,
    ToolSpec,
)
from harness.core.plan import ArgumentKind, PlanNode
from harness.engine.argument_rules import argument_issues
from harness.engine.validation_issues import IssueCode, ValidationIssue

AGENT_TOOL: Final = "agent"
"""The built-in tool of an agent node (one of the reserved names of `harness.catalog.tools`)."""

DEFAULT_MAX_TURNS: Final = 8
MAX_TURNS: Final = 50
"""The most model turns one agent node may take: a loop that has not answered by then is
looking, not converging, and every turn costs the run's budget."""


class AgentArguments(BaseModel):
    """The arguments of an agent node, as the loop reads them once its bindings are resolved."""

    goal: str = Field(min_length=1, description="What the agent is to find out or do.")
    tools: list[str] = Field(
        min_length=1,
        description="The catalog tools the agent may call, by name (LITERAL): data tools only, "
        "never `agent` or a final-synthesis tool.",
    )
    max_turns: int = Field(
        default=DEFAULT_MAX_TURNS,
        ge=1,
        le=MAX_TURNS,
        description="The most model turns the loop takes.",
    )
    context: list[JsonValue] = Field(
        default_factory=list,
        description="What the agent starts from: one NODE_RESULT binding per node.",
    )
    model: str | None = Field(
        default=None, description="The model of this agent; none: the run's agent model."
    )


def agent_tool_spec() -> ToolSpec:
    """The catalog entry of the built-in `agent` tool: its arguments are `AgentArguments`."""
    return ToolSpec.from_model(
        AGENT_TOOL,
        "Run a bounded tool-use loop: a model works towards `goal` with the listed `tools`, "
        "for at most `max_turns` turns, and returns its answer and the calls it made.",
        AgentArguments,
        uses_llm=True,
    )


def agent_node_issues(node: PlanNode, catalog: ToolCatalog) -> list[ValidationIssue]:
    """Every problem of an agent node against `catalog`: its bindings against the arguments an
    agent takes (the catalog's `agent` entry, or the built-in one), and each tool it lists is a
    catalog tool (did-you-mean for one that is not) that an agent may call."""
    spec = catalog.get(AGENT_TOOL) or agent_tool_spec()
    issues = argument_issues(node, spec)
    for binding in node.arguments:
        if binding.name != "tools":
            continue
        if binding.kind is not ArgumentKind.LITERAL:
            issues.append(
                ValidationIssue(
                    code=IssueCode.INVALID_ARGUMENT,
                    node_id=node.id,
                    message="argument 'tools' of agent must be LITERAL tool names, so that they "
                    "are checked before the run starts",
                )
            )
            continue
        for name in _listed_names(binding.value):
            issue = _tool_issue(node, catalog, name)
            if issue is not None:
                issues.append(issue)
    return issues


def _listed_names(value: JsonValue) -> list[str]:
    """The tool names a `tools` literal lists (a name, or a list of them); anything else is the
    schema's to report."""
    values = value if isinstance(value, list) else [value]
    return [item for item in values if isinstance(item, str)]


def _tool_issue(node: PlanNode, catalog: ToolCatalog, name: str) -> ValidationIssue | None:
    tool = catalog.get(name)
    if tool is None:
        return ValidationIssue(
            code=IssueCode.UNKNOWN_TOOL,
            node_id=node.id,
            message=f"agent tool '{name}' is not in the catalog{_suggestion(name, catalog)}",
        )
    if tool.name == AGENT_TOOL:
        reason = "an agent does not start agents; plan another agent node instead"
    elif tool.role is ToolRole.FINAL_SYNTHESIS:
        reason = "it writes the run's report, which only the plan's final node does"
    elif (why := _held_reason(tool)) is not None:
        reason = f"{why}, and an agent's loop does not open the run's waits yet: plan it as a node"
    else:
        return None
    return ValidationIssue(
        code=IssueCode.AGENT_TOOL_REFUSED,
        node_id=node.id,
        message=f"an agent may not call '{name}': {reason}",
    )


def _held_reason(tool: ToolSpec) -> str | None:
    """Why an agent cannot make a call of `tool` (one the run settles as a node: an uncertain
    side effect reconciled, a native wait, an async operation's result); None when it can. A
    side effect that is idempotent can: a repeat of its call, by its key, changes nothing, and
    its approval is asked through the run as the node's would be."""
    if (tool.requires_approval or tool.side_effects) and not tool.idempotent:
        return (
            "it has side effects and is not idempotent (an uncertain call is reconciled, "
            "never repeated)"
        )
    if tool.native_wait is not None:
        return "it is a wait of the run's"
    if tool.completion is not ToolCompletion.SYNC:
        return "its result comes later, by a delivery to the run"
    return None


def _suggestion(name: str, catalog: ToolCatalog) -> str:
    callable_names = [tool.name for tool in catalog.tools if agent_may_call(tool)]
    close = difflib.get_close_matches(name, callable_names, n=1)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f"; an agent may call {', '.join(callable_names) or 'no tool of this catalog'}"


def agent_may_call(tool: ToolSpec) -> bool:
    return (
        tool.name != AGENT_TOOL
        and tool.role is not ToolRole.FINAL_SYNTHESIS
        and _held_reason(tool) is None
    )


def agent_tool_names(listed: list[str], catalog: ToolCatalog, *, bound_to_task: bool) -> list[str]:
    """The catalog tools an agent may call: those its node lists and, in a run bound to a task,
    the harness's management tools too (`harness_*`: the gateway's actor rules hold for them,
    so an agent proposes and records, and never approves or completes)."""
    names = [name for name in listed if catalog.get(name) is not None]
    if bound_to_task:
        names += [
            tool.name
            for tool in catalog.tools
            if tool.name.startswith(RESERVED_TOOL_PREFIX) and tool.name not in names
        ]
    return names


class AgentStop(StrEnum):
    """Why an agent's loop ended."""

    ANSWERED = "answered"  # the model answered with text and asked for no more calls
    MAX_TURNS = "max_turns"  # the node's max_turns were taken without an answer
    BUDGET = "budget"  # the allowance could not pay for the next turn or call
    WAITING = "waiting"  # a session's slice: the model asked a person, and the slice ends


class AgentToolCall(BaseModel):
    """One call the model asked for, as the loop made it."""

    tool: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    ok: bool = Field(description="The call returned a result (not an error).")
    result: JsonValue = Field(
        default=None,
        description="What the call returned, when ok, as the loop gave it to the model (a "
        "later node reads an agent's evidence here, not only in its answer).",
    )
    error: str | None = Field(default=None, description="Why the call failed, when not ok.")

    @classmethod
    def made(
        cls, call: ToolCall, *, ok: bool, result: JsonValue, error: str | None
    ) -> AgentToolCall:
        """`call` as it was made: its result when ok, else why not."""
        return cls(
            tool=call.tool,
            arguments=call.arguments,
            ok=ok,
            result=result if ok else None,
            error=error,
        )


class AgentResult(BaseModel):
    """An agent node's result: what later nodes read (NODE_RESULT `answer`, `tool_calls` ...)."""

    answer: str = Field(
        description="The model's final text; when the loop stopped early, the best it had."
    )
    turns: int = Field(ge=0, description="Model turns taken.")
    tool_calls: list[AgentToolCall] = Field(default_factory=list)
    stopped: AgentStop
