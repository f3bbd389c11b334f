"""`@tool`: a typed function becomes a tool of the catalog.

The function stays callable as written (a test calls it directly); what the catalog holds is
its `.tool`, the same `Tool` (spec, argument model, run) a built-in scenario's tools are, so the
tool activity runs it as it runs them: arguments validated by the model, a sync function in a
thread, an async one on the worker's loop, a `ToolError` mapped to its error class, any other
exception a TOOL_EXECUTION_FAILED with its message redacted.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, TypeVar, cast, overload

from pydantic import BaseModel, JsonValue, ValidationError

from durable_harness.runtime import Tool, ToolContext, ToolFunction
from durable_harness.signatures import Signature, description, refuse, signature, tool_name
from harness.catalog.tools import (
    DEFAULT_TOOL_ATTEMPTS,
    MAX_TOOL_ATTEMPTS,
    MAX_TOOL_TIMEOUT_SECONDS,
    ToolRole,
    ToolSpec,
)
from harness.core.problems import describe_invalid

__all__ = ["FunctionTool", "tool"]

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


@dataclass(frozen=True)
class ToolOptions:
    """What `@tool(...)` says of a tool beyond its signature (the defaults: a read that may be
    retried, as the catalog's)."""

    name: str | None = None
    side_effects: bool = False
    idempotent: bool = False
    requires_approval: bool = False
    retries: int = DEFAULT_TOOL_ATTEMPTS
    timeout: float | None = None
    cost_hint: float = 1.0
    local: bool = False
    final: bool = False
    uses_llm: bool = False


class FunctionTool(Generic[P, R_co]):
    """A function made a tool by `@tool`. Calling it calls the function; `tool` is what a
    catalog holds, `spec` what the planner reads of it."""

    __name__: str
    __wrapped__: Callable[P, R_co]

    def __init__(self, function: Callable[P, R_co], tool: Tool) -> None:
        self._function = function
        self.tool = tool
        functools.update_wrapper(self, function)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co:
        return self._function(*args, **kwargs)

    @property
    def spec(self) -> ToolSpec:
        return self.tool.spec

    @property
    def name(self) -> str:
        return self.tool.spec.name

    def __repr__(self) -> str:
        return f"<tool {self.name}>"


@overload
def tool(function: Callable[P, R], /) -> FunctionTool[P, R]: ...


@overload
def tool(
    *,
    name: str | None = None,
    side_effects: bool = False,
    idempotent: bool = False,
    requires_approval: bool = False,
    retries: int = DEFAULT_TOOL_ATTEMPTS,
    timeout: float | None = None,
    cost_hint: float = 1.0,
    local: bool = False,
    final: bool = False,
    uses_llm: bool = False,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


def tool(
    function: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    side_effects: bool = False,
    idempotent: bool = False,
    requires_approval: bool = False,
    retries: int = DEFAULT_TOOL_ATTEMPTS,
    timeout: float | None = None,
    cost_hint: float = 1.0,
    local: bool = False,
    final: bool = False,
    uses_llm: bool = False,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Make a typed function a tool, as `@tool` or `@tool(name=..., ...)`.

    The arguments' JSON schema comes from the signature (a parameter annotated `ToolContext` is
    given the call's context and left out), the description from the docstring's first
    paragraph, the result schema from a return type that is a pydantic model or a typed dict.

    - `name`: the catalog's name (default: the function's); `harness_...`, `write_report` and
      `agent` are reserved.
    - `side_effects`, `idempotent`, `requires_approval`: as a `ToolSpec` has them; a side effect
      that is not idempotent runs once.
    - `retries`: the attempts of one call, the first included (1 to 10); `timeout`: seconds one
      attempt may take (none: the house default).
    - `cost_hint`: the relative cost of a call; `local`: a cheap in-memory tool, run as a local
      activity; `final`: the tool writes the run's report; `uses_llm`: it writes with the
      context's model (`ToolContext.write`).

    A definition that cannot be a tool raises `ToolDefinitionError` here, at import.
    """
    options = ToolOptions(
        name=name,
        side_effects=side_effects,
        idempotent=idempotent,
        requires_approval=requires_approval,
        retries=retries,
        timeout=timeout,
        cost_hint=cost_hint,
        local=local,
        final=final,
        uses_llm=uses_llm,
    )

    def decorate(function: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool(function, _tool_of(function, options))

    return decorate if function is None else decorate(function)


def _tool_of(function: Callable[..., Any], options: ToolOptions) -> Tool:
    typed = signature(function)
    spec = _spec(function, options, typed)
    return Tool(spec=spec, arguments=typed.arguments, run=_runner(function, typed))


def _spec(function: Callable[..., Any], options: ToolOptions, typed: Signature) -> ToolSpec:
    if not 1 <= options.retries <= MAX_TOOL_ATTEMPTS:
        raise refuse(
            function, f"retries is {options.retries}; use 1 to {MAX_TOOL_ATTEMPTS} (attempts)"
        )
    timeout = options.timeout
    if timeout is not None and not 0 < timeout <= MAX_TOOL_TIMEOUT_SECONDS:
        raise refuse(
            function,
            f"timeout is {timeout}; use more than 0 and at most {MAX_TOOL_TIMEOUT_SECONDS:g} "
            "seconds",
        )
    try:
        return ToolSpec(
            name=tool_name(function, options.name),
            description=description(function),
            arguments_schema=typed.arguments.model_json_schema(),
            result_schema=typed.result_schema,
            role=ToolRole.FINAL_SYNTHESIS if options.final else ToolRole.DATA,
            cost_hint=options.cost_hint,
            side_effects=options.side_effects,
            idempotent=options.idempotent,
            uses_llm=options.uses_llm,
            requires_approval=options.requires_approval,
            local=options.local,
            max_attempts=options.retries,
            timeout_seconds=timeout,
        )
    except ValidationError as error:
        raise refuse(function, describe_invalid(error, whole="options")) from None


def _runner(function: Callable[..., Any], typed: Signature) -> ToolFunction:
    """The catalog's `run(arguments, context)` for the function: a coroutine function for an
    async one (awaited on the loop), a plain one for a sync one (which `Tool.call` runs in a
    thread)."""
    names = list(typed.arguments.model_fields)

    def keywords(arguments: BaseModel, context: ToolContext) -> dict[str, Any]:
        given = {name: getattr(arguments, name) for name in names}
        if typed.context is not None:
            given[typed.context] = context
        return given

    if inspect.iscoroutinefunction(function):

        async def run_async(arguments: BaseModel, context: ToolContext) -> JsonValue:
            return _result(function, typed, await function(**keywords(arguments, context)))

        return run_async

    def run(arguments: BaseModel, context: ToolContext) -> JsonValue:
        return _result(function, typed, function(**keywords(arguments, context)))

    return run


def _result(function: Callable[..., Any], typed: Signature, returned: object) -> JsonValue:
    """What the function returned, checked against its return type and dumped as JSON (a model
    becomes its fields): a result that does not fit is the tool's fault, a failure of the call."""
    try:
        value = typed.result.validate_python(returned)
    except ValidationError as error:
        problems = describe_invalid(error, whole="result")
        raise TypeError(
            f"{function.__name__} returned what its return type refuses: {problems}"
        ) from None
    return cast(JsonValue, typed.result.dump_python(value, mode="json"))
