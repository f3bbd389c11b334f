"""Reuse across replans: a node identical to one that already succeeded (same tool, same
resolved arguments) takes the earlier result instead of being paid for twice."""

from __future__ import annotations

import json

from pydantic import JsonValue


def call_key(tool: str, arguments: dict[str, JsonValue]) -> str:
    return tool + ":" + json.dumps(arguments, sort_keys=True, separators=(",", ":"))
