"""The exceptions of the public package: what a tool raises to fail predictably, and what a
definition that cannot be a tool raises where it is written.

`ToolError` and `ErrorCode` are the harness's own (`harness.core.errors`), re-exported: the tool
activity maps a `ToolError` onto the error classes that decide retry, replan or halt, and any
other exception a tool raises onto TOOL_EXECUTION_FAILED, with its message redacted.
"""

from __future__ import annotations

from harness.core.errors import ErrorCode, ToolError

__all__ = ["ErrorCode", "ToolDefinitionError", "ToolError"]


class ToolDefinitionError(TypeError):
    """A function that cannot be a tool (a parameter without a type annotation, a type that is
    not JSON, a reserved name...), raised by `@tool` when the module defining it is imported.
    Its message is one line that names the function and what to change."""
