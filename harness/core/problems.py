"""The one way to say what is wrong with data a pydantic model refused."""

from __future__ import annotations

from pydantic import ValidationError


def describe_invalid(error: ValidationError, *, whole: str, limit: int | None = 5) -> str:
    """`days: Input should be a valid integer; city: Field required`: each problem at its place
    (`whole` names the place when the problem is the value itself), the first `limit` of them."""
    items = error.errors()
    shown = items if limit is None else items[:limit]
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or whole}: {item['msg']}" for item in shown
    )


def article(word: str) -> str:
    """'an' before AgentRun or EvalRequest, 'a' before RunRequest."""
    return "an" if word[:1].upper() in "AEIOU" else "a"
