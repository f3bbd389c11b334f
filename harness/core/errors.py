"""Error taxonomy: a code names what went wrong, its class decides what recovery does."""

from __future__ import annotations

import difflib
from enum import StrEnum

from pydantic import BaseModel, JsonValue


class ErrorCode(StrEnum):
    """What went wrong, by name; its ErrorClass decides whether the call is retried, the plan
    is repaired or the run halts."""

    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    MISSING_REQUIRED_ARGUMENT = "MISSING_REQUIRED_ARGUMENT"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    MISSING_INFO = "MISSING_INFO"
    CANNOT_PLAN = "CANNOT_PLAN"
    """The planner's model says no plan over the tools can reach the goal (its `cannot_plan`,
    with its reason): planned once more, told the reason, then the user is asked."""
    ALREADY_DONE = "ALREADY_DONE"
    """What the step would do has been done already (by an earlier run): plan around it."""
    RATE_LIMITED = "RATE_LIMITED"
    TIMEOUT = "TIMEOUT"
    TOOL_UNAVAILABLE = "TOOL_UNAVAILABLE"
    """The system a tool runs in could not be reached (an MCP server that died or refused the
    connection): the next attempt reconnects."""
    TOOL_EXECUTION_FAILED = "TOOL_EXECUTION_FAILED"
    POLICY_VIOLATION = "POLICY_VIOLATION"
    INVALID_MODEL_OUTPUT = "INVALID_MODEL_OUTPUT"
    AUTH_FAILED = "AUTH_FAILED"
    CONFIG_INVALID = "CONFIG_INVALID"
    UNKNOWN_SCENARIO = "UNKNOWN_SCENARIO"
    REQUEST_REJECTED = "REQUEST_REJECTED"
    """A model provider cannot accept the request as sent (400, 413, 422, or a 5xx whose body
    names a parameter): the same request would fail again, so the run halts with the server's
    message instead of planning again."""
    PROVIDER_UNAVAILABLE = "PROVIDER_UNAVAILABLE"
    """A model provider failed with a server error that is no rate limit (a 5xx without
    Retry-After): an outage, retried with its own backoff."""


class ErrorClass(StrEnum):
    VALIDATION = "VALIDATION"
    MISSING_INFO = "MISSING_INFO"
    TRANSIENT = "TRANSIENT"
    FATAL = "FATAL"


_CLASS_OF: dict[ErrorCode, ErrorClass] = {
    ErrorCode.UNKNOWN_TOOL: ErrorClass.VALIDATION,
    ErrorCode.MISSING_REQUIRED_ARGUMENT: ErrorClass.VALIDATION,
    ErrorCode.INVALID_ARGUMENT: ErrorClass.VALIDATION,
    ErrorCode.MISSING_INFO: ErrorClass.MISSING_INFO,
    ErrorCode.CANNOT_PLAN: ErrorClass.MISSING_INFO,
    ErrorCode.ALREADY_DONE: ErrorClass.MISSING_INFO,
    ErrorCode.RATE_LIMITED: ErrorClass.TRANSIENT,
    ErrorCode.TIMEOUT: ErrorClass.TRANSIENT,
    ErrorCode.TOOL_UNAVAILABLE: ErrorClass.TRANSIENT,
    ErrorCode.TOOL_EXECUTION_FAILED: ErrorClass.FATAL,
    ErrorCode.POLICY_VIOLATION: ErrorClass.FATAL,
    ErrorCode.INVALID_MODEL_OUTPUT: ErrorClass.VALIDATION,
    ErrorCode.AUTH_FAILED: ErrorClass.FATAL,
    ErrorCode.CONFIG_INVALID: ErrorClass.FATAL,
    ErrorCode.UNKNOWN_SCENARIO: ErrorClass.FATAL,
    ErrorCode.REQUEST_REJECTED: ErrorClass.FATAL,
    ErrorCode.PROVIDER_UNAVAILABLE: ErrorClass.TRANSIENT,
}


def classify(code: ErrorCode) -> ErrorClass:
    return _CLASS_OF[code]


_SEVERITY = [ErrorClass.FATAL, ErrorClass.VALIDATION, ErrorClass.MISSING_INFO, ErrorClass.TRANSIENT]


def worst_class(codes: list[str]) -> ErrorClass:
    """Several failures recover as the most severe of them demands (FATAL first)."""
    return min((classify(parse_error_code(code)) for code in codes), key=_SEVERITY.index)


def is_retryable(code: ErrorCode) -> bool:
    return classify(code) is ErrorClass.TRANSIENT


def parse_error_code(value: str | None) -> ErrorCode:
    """The code carried by a failure; anything we do not know is an unexpected tool failure."""
    try:
        return ErrorCode(value or "")
    except ValueError:
        return ErrorCode.TOOL_EXECUTION_FAILED


def error_code_named(code: ErrorCode | str) -> ErrorCode:
    """The code given as the enum or by its name (`"MISSING_INFO"`). A name that is no code
    raises ValueError naming the closest and all of them: a tool author's typo is told, never
    turned into another code."""
    if isinstance(code, ErrorCode):
        return code
    try:
        return ErrorCode(code)
    except ValueError:
        names = [member.value for member in ErrorCode]
        close = difflib.get_close_matches(code, names, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ValueError(
            f"'{code}' is not an error code{hint} (codes: {', '.join(names)})"
        ) from None


class ToolError(Exception):
    """Raised by a tool for a predictable failure; the code (the enum or its name) drives
    recovery."""

    def __init__(self, code: ErrorCode | str, message: str, data: JsonValue = None) -> None:
        super().__init__(message)
        self.code = error_code_named(code)
        self.message = message
        self.data = data


class FailureContext(BaseModel):
    """What the planner is told about the previous attempt when it is asked to plan again."""

    node_id: str | None = None
    tool: str | None = None
    arguments: dict[str, JsonValue] | None = None
    code: str
    message: str
