"""The run's shared budget: usage charged as the run goes, against optional limits."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from pydantic import BaseModel, Field


class BudgetLimits(BaseModel):
    """Each limit is optional. The ranges a run accepts are in `harness.engine.bounds` (checked
    where
    a request enters, not here: a model that refused what it once took would fail the replay of
    every run that took it)."""

    max_tokens: int | None = Field(default=None, gt=0)
    max_tool_calls: int | None = Field(default=None, gt=0)
    max_seconds: float | None = Field(default=None, gt=0)
    max_cost_usd: float | None = Field(default=None, gt=0)


class BudgetUsage(BaseModel):
    tokens: int = 0
    tool_calls: int = 0
    seconds: float = 0.0
    cost_usd: float = 0.0


class BudgetSnapshot(BaseModel):
    limits: BudgetLimits
    usage: BudgetUsage
    pressure: float


def _no_clock() -> float:
    return 0.0


def attempts_to_reserve(wanted: int, limit: int | None, used: int, reserved: int) -> int:
    """The attempts a tool call may make when it is admitted: the `wanted` attempts of its tool,
    or fewer, so that the calls `used` so far, the attempts `reserved` by calls still running and
    this call's together stay within `limit`. 0: no call may start now."""
    if limit is None:
        return wanted
    return max(0, min(wanted, limit - used - reserved))


class Budget:
    """Charges usage and reports pressure: the highest utilisation across limited dimensions.

    Elapsed time is read from `elapsed_seconds` whenever it is needed, so pressure never depends
    on when something last wrote the time down.

    Tool calls are either charged one by one (`charge_tool_call`, runs before 0.10, whose
    retries were charged after they ran) or reserved: a call reserves the attempts it may make
    when it is admitted, and when it finishes is charged the attempts it made and gives the
    rest back (`reserve_tool_calls`, `settle_tool_calls`). Pressure counts calls made, not
    reserved: a reservation only keeps other calls from starting."""

    def __init__(
        self, limits: BudgetLimits, elapsed_seconds: Callable[[], float] = _no_clock
    ) -> None:
        self.limits = limits
        self._elapsed_seconds = elapsed_seconds
        self._tokens = 0
        self._tool_calls = 0
        self._reserved_calls = 0
        self._cost_usd = 0.0

    def charge_tokens(self, tokens: int, cost_usd: float = 0.0) -> None:
        self._tokens += tokens
        self._cost_usd += cost_usd

    def charge_tool_call(self) -> None:
        self._tool_calls += 1

    def reserve_tool_calls(self, wanted: int) -> int:
        """Reserve up to `wanted` attempts of one call; the attempts it may make (0: none)."""
        granted = attempts_to_reserve(
            wanted, self.limits.max_tool_calls, self._tool_calls, self._reserved_calls
        )
        self._reserved_calls += granted
        return granted

    def settle_tool_calls(self, reserved: int, used: int) -> None:
        """A call that `reserved` attempts finished after `used`: charge those, free the rest."""
        self._reserved_calls -= reserved
        self._tool_calls += used

    def can_reserve_tool_call(self) -> bool:
        """At least one attempt is neither made nor reserved (always, without a limit)."""
        limit = self.limits.max_tool_calls
        return attempts_to_reserve(1, limit, self._tool_calls, self._reserved_calls) > 0

    @property
    def reserved_tool_calls(self) -> int:
        """Attempts reserved by calls still running."""
        return self._reserved_calls

    @property
    def usage(self) -> BudgetUsage:
        return BudgetUsage(
            tokens=self._tokens,
            tool_calls=self._tool_calls,
            seconds=self._elapsed_seconds(),
            cost_usd=self._cost_usd,
        )

    def seconds_left(self) -> float | None:
        limit = self.limits.max_seconds
        return None if limit is None else limit - self._elapsed_seconds()

    def pressure(self, elapsed_seconds: float | None = None) -> float:
        """Pressure now, or with the time taken as `elapsed_seconds` when that is given."""
        seconds = self._elapsed_seconds() if elapsed_seconds is None else elapsed_seconds
        return _utilisation(
            self.limits,
            tokens=self._tokens,
            tool_calls=self._tool_calls,
            seconds=seconds,
            cost_usd=self._cost_usd,
        )

    def degradation(self, elapsed_seconds: float | None = None) -> Degradation:
        return degradation(self.pressure(elapsed_seconds))

    def snapshot(self) -> BudgetSnapshot:
        return BudgetSnapshot(
            limits=self.limits, usage=self.usage, pressure=round(self.pressure(), 4)
        )


def pressure_of(limits: BudgetLimits, usage: BudgetUsage) -> float:
    """The pressure of `usage` against `limits`, as `Budget.pressure` measures a run's (an agent's
    allowance is measured so)."""
    return _utilisation(
        limits,
        tokens=usage.tokens,
        tool_calls=usage.tool_calls,
        seconds=usage.seconds,
        cost_usd=usage.cost_usd,
    )


def _utilisation(
    limits: BudgetLimits, *, tokens: int, tool_calls: int, seconds: float, cost_usd: float
) -> float:
    """The highest share of a limit used, across the limited dimensions (0.0: none limited)."""
    pairs: list[tuple[float, float | None]] = [
        (tokens, limits.max_tokens),
        (tool_calls, limits.max_tool_calls),
        (seconds, limits.max_seconds),
        (cost_usd, limits.max_cost_usd),
    ]
    return max((used / limit for used, limit in pairs if limit), default=0.0)


class Degradation(StrEnum):
    """What the run may still afford, by pressure."""

    FULL = "FULL"  # below 0.7: the whole pipeline
    CONSERVE = "CONSERVE"  # 0.7 to 0.9: no replans for a failed judge verdict
    MINIMAL = "MINIMAL"  # 0.9 to 1.0: deterministic checks only, no LLM judge
    EXHAUSTED = "EXHAUSTED"  # 1.0 and above: no new node is admitted


CONSERVE_AT = 0.7
MINIMAL_AT = 0.9


def degradation(pressure: float) -> Degradation:
    if pressure >= 1.0:
        return Degradation.EXHAUSTED
    if pressure >= MINIMAL_AT:
        return Degradation.MINIMAL
    if pressure >= CONSERVE_AT:
        return Degradation.CONSERVE
    return Degradation.FULL
