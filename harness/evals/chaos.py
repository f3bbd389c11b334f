"""Chaos for evals: which model mistakes `harness eval --chaos RATE` injects, and when.

An eval with chaos runs each case on a provider named `chaos:RATE:SEED:KEY:INNER`, which the
worker's registry resolves to the INNER provider (the worker's default when empty) wrapped in
activities.llm.chaos. Each planner call draws once per activity attempt from a hash of
(SEED, KEY, plan attempt, activity attempt): the same eval gives the same draws, and a retry of
a failed call draws again, so a 500 on the first attempt need not come back on the second.
KEY names the case's run (scenario/id#repeat), not its run id, which holds the random eval id.

Everything injected is said in the run itself: a plan the chaos changed is `planned by` its
provider with a `[chaos: KIND, ...]` mark, and a call it failed carries the mark in its error,
so the trace shows what was injected and an eval's scoring reads it back from there.
"""

from __future__ import annotations

import hashlib
import re
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, Field

PREFIX: Final = "chaos:"
DEFAULT_CHAOS_SEED: Final = 38
"""The seed of `--chaos` when none is given: CI's table is the same on every run."""
MAX_CHAOS_MARKS: Final = 12
"""A case result keeps the first this many injected kinds (a suite carries every result)."""


class ChaosKind(StrEnum):
    """A mistake a real model or its server makes, injected into a planner call."""

    UNKNOWN_TOOL = "unknown_tool"
    """A plan node calls a misspelt tool (the validator: UNKNOWN_TOOL, a replan)."""
    MISSING_ARGUMENT = "missing_argument"
    """A node leaves out a required argument (the validator: MISSING_REQUIRED_ARGUMENT)."""
    BAD_PATH = "bad_path"
    """A NODE_RESULT binding names a path its result does not have."""
    CYCLE = "cycle"
    """The first node depends on the last: the plan is no DAG (the validator: CYCLE)."""
    PROSE_JSON = "prose_json"
    """The plan's JSON comes wrapped in prose, parsed by the structured-output parser."""
    CUT_OFF = "cut_off"
    """The reply stops at its token limit in the middle of the JSON."""
    CANNOT_PLAN = "cannot_plan"
    """The model says, wrongly, that no plan over the tools can reach the goal."""
    HTTP_500 = "http_500"
    """The server fails with a 500 (PROVIDER_UNAVAILABLE, retried)."""
    HTTP_429 = "http_429"
    """The server rate limits with Retry-After: 1 (RATE_LIMITED, retried after it)."""
    TIMEOUT = "timeout"
    """No answer in time (TIMEOUT, retried)."""

    @property
    def transport(self) -> bool:
        """A failure of the call itself: the same call is tried again (Temporal's retry)."""
        return self in TRANSPORT_KINDS


KINDS: Final = tuple(ChaosKind)
TRANSPORT_KINDS: Final = frozenset({ChaosKind.HTTP_500, ChaosKind.HTTP_429, ChaosKind.TIMEOUT})

_MARK = re.compile(r"\[chaos: ([a-z0-9_, ]+)\]")


class ChaosSettings(BaseModel):
    """`--chaos RATE --chaos-seed N` of an eval: how often a planner call goes wrong."""

    rate: float = Field(gt=0, le=1, description="The chance that a planner call goes wrong.")
    seed: int = Field(default=DEFAULT_CHAOS_SEED, ge=0, lt=2**63)

    def provider_for(self, key: str, inner: str | None) -> str:
        """The provider name of one case's run: its own draws, around `inner`."""
        return ChaosSpec(rate=self.rate, seed=self.seed, key=key, inner=inner).name()


class ChaosSpec(BaseModel):
    """A chaos provider name, taken apart."""

    rate: float = Field(gt=0, le=1)
    seed: int = Field(ge=0)
    key: str
    inner: str | None = None

    def name(self) -> str:
        key = self.key.replace(":", "_")
        return f"{PREFIX}{self.rate:g}:{self.seed}:{key}:{self.inner or ''}"

    @classmethod
    def parse(cls, name: str) -> ChaosSpec:
        """The spec of `chaos:RATE:SEED:KEY:INNER`; ValueError, saying what is wrong, if not."""
        parts = name.removeprefix(PREFIX).split(":", 3)
        if not name.startswith(PREFIX) or len(parts) != 4:
            raise ValueError(f"'{name}' is not a chaos provider name (chaos:RATE:SEED:KEY:INNER)")
        rate, seed, key, inner = parts
        try:
            return cls(rate=float(rate), seed=int(seed), key=key, inner=inner or None)
        except ValueError as error:
            raise ValueError(f"'{name}': a chaos rate is in (0, 1], a seed is >= 0") from error

    def draw(self, call: str, activity_attempt: int) -> ChaosKind | None:
        """The mistake injected into attempt `activity_attempt` of `call`, or None."""
        text = f"{self.seed}|{self.key}|{call}|{activity_attempt}"
        digest = hashlib.sha256(text.encode()).digest()
        chance = int.from_bytes(digest[:8], "big") / 2**64
        if chance >= self.rate:
            return None
        return KINDS[int.from_bytes(digest[8:16], "big") % len(KINDS)]


def is_chaos(name: str | None) -> bool:
    return name is not None and name.startswith(PREFIX)


def mark(kinds: list[ChaosKind]) -> str:
    """The mark that says, in a planned_by or an error message, what was injected."""
    return f"[chaos: {', '.join(kind.value for kind in kinds)}]"


def marked_kinds(text: str | None) -> list[ChaosKind]:
    """The kinds named by every chaos mark in `text`, in order."""
    if not text:
        return []
    known = {kind.value: kind for kind in KINDS}
    return [
        known[name.strip()]
        for found in _MARK.findall(text)
        for name in found.split(",")
        if name.strip() in known
    ]
