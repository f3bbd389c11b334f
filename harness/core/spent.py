"""What a model activity's attempts spent, as its heartbeats and failures carry it to the next
attempt and to the workflow (see activities.spending)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from harness.core.usage import TokenUsage

SPENT_KEY = "spent"
"""The key of the heartbeat detail that carries the attempts' spending."""
USAGE_KEY = "usage"
"""The key, in a failure's first detail, of what the failed attempts spent."""


def spent_in(details: Sequence[object], key: str = SPENT_KEY) -> TokenUsage | None:
    """The spending the first detail that names `key` carries; None when none does."""
    for detail in details:
        if isinstance(detail, dict) and key in detail:
            try:
                return TokenUsage.model_validate(detail[key])
            except ValidationError:
                return None
    return None


def carried(usage: TokenUsage, key: str = SPENT_KEY) -> dict[str, object]:
    return {key: usage.model_dump(mode="json")}
