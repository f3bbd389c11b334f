"""Reading a typed function as a tool: its argument model from the signature, its description
from the docstring, its result type from the return annotation.

Everything here runs once, when `@tool` decorates the function (at import), so a definition that
cannot work is refused there, in one line naming the function, never on a worker mid-run.
"""

from __future__ import annotations

import inspect
import re
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, PydanticUserError, TypeAdapter, create_model
from pydantic.json_schema import PydanticJsonSchemaWarning
from typing_extensions import is_typeddict

from durable_harness.errors import ToolDefinitionError
from durable_harness.runtime import ToolContext
from harness.catalog.tools import reserved_name_reason

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a tool may be called: the names the LLM providers accept for a function."""

_PARAMETER_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


@dataclass(frozen=True)
class Signature:
    """What a function is as a tool."""

    arguments: type[BaseModel]
    """The arguments' model: validates each call, and its JSON schema is the catalog's."""
    context: str | None
    """The parameter that receives the `ToolContext` (none: the function takes none)."""
    result: TypeAdapter[Any]
    """Checks and dumps what the function returns, as its return annotation says."""
    result_schema: dict[str, Any] | None
    """The result's JSON schema when the return type is (or holds) a pydantic model or a typed
    dict."""


def where(function: Callable[..., object]) -> str:
    """The function as a message names it: module and qualified name."""
    module = getattr(function, "__module__", None) or "?"
    name = getattr(function, "__qualname__", None) or repr(function)
    return f"{module}.{name}"


def refuse(function: Callable[..., object], reason: str) -> ToolDefinitionError:
    return ToolDefinitionError(f"cannot make a tool of {where(function)}: {reason}")


def tool_name(function: Callable[..., object], name: str | None) -> str:
    """The catalog's name of the tool: the one given, else the function's."""
    chosen = name if name is not None else function.__name__
    if not TOOL_NAME.fullmatch(chosen):
        raise refuse(function, f"the name '{chosen}' is not 1 to 64 letters, digits, _ or -")
    reason = reserved_name_reason(chosen)
    if reason is not None:
        raise refuse(function, f"the name '{chosen}' is reserved ({reason}); pass name=...")
    return chosen


def description(function: Callable[..., object]) -> str:
    """The first paragraph of the docstring, on one line: what the planner reads of the tool."""
    doc = inspect.getdoc(function)
    if not doc or not doc.strip():
        raise refuse(function, "it has no docstring; its first paragraph describes the tool")
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in first.splitlines())


def signature(function: Callable[..., object]) -> Signature:
    """The function as a tool: each parameter an argument of a JSON type (the `ToolContext`
    one aside), a return type of a JSON type too."""
    if not inspect.isfunction(function):
        raise refuse(function, "only a function (def or async def) can be a tool")
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        raise refuse(function, "a generator cannot be a tool; return the result whole")
    hints = _hints(function)
    fields: dict[str, Any] = {}
    context: str | None = None
    for parameter in inspect.signature(function).parameters.values():
        annotation = _annotation(function, parameter, hints)
        if annotation is ToolContext:
            if context is not None:
                both = f"'{context}' and '{parameter.name}' both ask for the context"
                raise refuse(function, both)
            context = parameter.name
            continue
        _check_json(function, f"parameter '{parameter.name}'", annotation)
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (annotation, default)
    if "return" not in hints:
        raise refuse(function, "it has no return annotation (-> a JSON type, a model or a dict)")
    returns = hints["return"]
    result = _check_json(function, "the return type", returns, mode="serialization")
    return Signature(
        arguments=_model(function, fields),
        context=context,
        result=result,
        result_schema=result.json_schema(mode="serialization") if _declares(returns) else None,
    )


def _hints(function: Callable[..., object]) -> dict[str, Any]:
    """The annotations, resolved (a module with `from __future__ import annotations` has them
    as strings): a name that cannot be resolved is refused."""
    try:
        return typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError) as error:
        raise refuse(function, f"an annotation cannot be resolved ({error})") from error


def _annotation(
    function: Callable[..., object], parameter: inspect.Parameter, hints: dict[str, Any]
) -> Any:
    if parameter.kind not in _PARAMETER_KINDS:
        raise refuse(
            function,
            f"parameter '{parameter.name}' is {parameter.kind.description}; a tool's "
            "arguments are named",
        )
    if parameter.name not in hints:
        raise refuse(function, f"parameter '{parameter.name}' has no type annotation")
    if parameter.name.startswith("_"):
        raise refuse(function, f"parameter '{parameter.name}': argument names cannot start with _")
    return hints[parameter.name]


def _check_json(
    function: Callable[..., object],
    what: str,
    annotation: Any,
    mode: Literal["validation", "serialization"] = "validation",
) -> TypeAdapter[Any]:
    """The type's adapter, once pydantic has shown it can describe the type as JSON."""
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PydanticJsonSchemaWarning)
            adapter.json_schema(mode=mode)
    except (PydanticUserError, PydanticJsonSchemaWarning, TypeError, ValueError) as error:
        reason = str(error).strip().splitlines()[0]
        raise refuse(
            function, f"{what}: {_shown(annotation)} is not a JSON type ({reason})"
        ) from error
    return adapter


def _model(function: Callable[..., object], fields: dict[str, Any]) -> type[BaseModel]:
    name = "".join(part.capitalize() for part in function.__name__.split("_")) or "Tool"
    try:
        model: type[BaseModel] = create_model(
            f"{name}Arguments",
            __module__=function.__module__,
            **fields,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error", PydanticJsonSchemaWarning)
            model.model_json_schema()
    except (PydanticUserError, PydanticJsonSchemaWarning, TypeError, ValueError) as error:
        reason = str(error).strip().splitlines()[0]
        raise refuse(function, f"its arguments are not JSON ({reason})") from error
    return model


def _declares(returns: Any) -> bool:
    """A return type with a schema of its own: a pydantic model or a typed dict, or a list,
    tuple, dict or union of them (`list[Reading]`, `Reading | None`)."""
    if inspect.isclass(returns) and (issubclass(returns, BaseModel) or is_typeddict(returns)):
        return True
    return any(_declares(argument) for argument in typing.get_args(returns))


def _shown(annotation: Any) -> str:
    return annotation.__name__ if inspect.isclass(annotation) else repr(annotation)
