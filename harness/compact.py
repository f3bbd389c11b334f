"""Models that travel once per node (a tool call's request and result, a batch's calls and
outcomes) and so are paid for on every node of every run's history.

They serialize without the optional fields that hold their defaults: a call with no fault, no
task, no MCP target and no usage says nothing of them. Reading fills the defaults back in, so the
payload means the same, and payloads written before (with every field) still read.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

_EMPTY: tuple[object, ...] = (None, False, {}, [])


class CompactModel(BaseModel):
    @model_serializer(mode="wrap")
    def _without_defaults(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        fields = type(self).model_fields
        return {
            name: value
            for name, value in data.items()
            if name not in fields
            or fields[name].is_required()
            or not _is_empty_default(value, fields[name].get_default(call_default_factory=True))
        }


def _is_empty_default(value: object, default: object) -> bool:
    """The field holds its default and that default says nothing (None, False, empty)."""
    return any(value == empty and type(value) is type(empty) for empty in _EMPTY) and (
        value == default
    )
