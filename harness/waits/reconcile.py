"""What a person delivers to reconcile a side effect whose outcome is uncertain: the tool's
example result with its placeholders filled from what the run knows (the call's arguments,
named in capitals, and the operation id)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

OPERATION_ID = "OPERATION_ID"
UNKNOWN_RESULT = "RESULT"
# harness.waits.wait_book.RECONCILE_PLACEHOLDERS refuses a delivery that still holds either.
"""Where a tool gives no example: the person must supply the whole result."""


def reconcile_example(
    template: JsonValue, arguments: Mapping[str, JsonValue], operation_id: str | None
) -> dict[str, JsonValue]:
    """The payload that reconciles the call as done; `{"outcome": "failed"}` says it was not."""
    values: dict[str, JsonValue] = {name.upper(): value for name, value in arguments.items()}
    if operation_id is not None:
        values[OPERATION_ID] = operation_id
    result = UNKNOWN_RESULT if template is None else _filled(template, values)
    return {"outcome": "succeeded", "result": result}


def _filled(template: JsonValue, values: Mapping[str, JsonValue]) -> JsonValue:
    if isinstance(template, str):
        return values.get(template, template)
    if isinstance(template, list):
        return [_filled(item, values) for item in template]
    if isinstance(template, dict):
        return {key: _filled(item, values) for key, item in template.items()}
    return template
