"""What plan validation reports: one issue per problem, each with a code from a closed set, the
node it is about and a message that says what to fix. Apart from `validation` so that the rules
of one kind of node (an agent node's, `agent_node`) can report in the same words."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel


class IssueCode(StrEnum):
    EMPTY_PLAN = "EMPTY_PLAN"
    TOO_MANY_NODES = "TOO_MANY_NODES"
    DUPLICATE_NODE_ID = "DUPLICATE_NODE_ID"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    UNKNOWN_ARGUMENT = "UNKNOWN_ARGUMENT"
    DUPLICATE_ARGUMENT = "DUPLICATE_ARGUMENT"
    MISSING_REQUIRED_ARGUMENT = "MISSING_REQUIRED_ARGUMENT"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    UNKNOWN_DEPENDENCY = "UNKNOWN_DEPENDENCY"
    SELF_DEPENDENCY = "SELF_DEPENDENCY"
    CYCLE = "CYCLE"
    NODE_RESULT_UNKNOWN_NODE = "NODE_RESULT_UNKNOWN_NODE"
    NODE_RESULT_NOT_IN_DEPS = "NODE_RESULT_NOT_IN_DEPS"
    NODE_RESULT_BAD_PATH = "NODE_RESULT_BAD_PATH"
    """A NODE_RESULT path names what its source tool's result schema does not have."""
    FINAL_SYNTHESIS_COUNT = "FINAL_SYNTHESIS_COUNT"
    FINAL_SYNTHESIS_NOT_LAST = "FINAL_SYNTHESIS_NOT_LAST"
    TASK_REQUIRED = "TASK_REQUIRED"
    AGENT_TOOL_REFUSED = "AGENT_TOOL_REFUSED"
    """An agent node lists a tool an agent may not call: `agent`, or a final-synthesis tool."""


class ValidationIssue(BaseModel):
    code: IssueCode
    node_id: str | None = None
    message: str

    def describe(self) -> str:
        return f"{self.code} {self.node_id or '-'}: {self.message}"


class ValidationReport(BaseModel):
    valid: bool
    issues: list[ValidationIssue]
