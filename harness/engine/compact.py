"""Fields of the models that travel once per node (a tool call's request and result, a batch's
calls and outcomes), and so are paid for on every node of every run's history.

Each optional field is left out of the payload while it holds its default: a call with no fault,
no task, no MCP target and no usage says nothing of them. Reading fills the default back in, so
the payload means the same, and payloads written before (with every field) still read. Pydantic
decides it per field as it serializes (`exclude_if`), which costs next to nothing; a model-wide
Python serializer cost 15 µs per model, enough to stall a workflow task that starts a batch.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field


def _none(value: object) -> bool:
    return value is None


def _false(value: object) -> bool:
    return value is False


def _zero(value: object) -> bool:
    return type(value) is int and value == 0


def _empty(value: object) -> bool:
    return isinstance(value, dict | list) and not value


def unless_none(**kwargs: Any) -> Any:
    """An optional field, `None` by default and then left out."""
    return Field(default=None, exclude_if=_none, **kwargs)


def unless_false(**kwargs: Any) -> Any:
    """A flag, `False` by default and then left out."""
    return Field(default=False, exclude_if=_false, **kwargs)


def unless_zero(**kwargs: Any) -> Any:
    """A count, 0 by default and then left out."""
    return Field(default=0, exclude_if=_zero, **kwargs)


def unless_empty(**kwargs: Any) -> Any:
    """A collection, empty by default (`default_factory`) and then left out."""
    return Field(exclude_if=_empty, **kwargs)
