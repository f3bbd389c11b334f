"""The run's signals, read defensively.

A signal handler that raises fails the workflow task, and a task that fails on a signal fails
again on every retry: the run would never take another signal, not even a cancel. So the run
takes every signal through one dynamic handler, with its payloads as raw values, and reads them
here: exactly one payload, of the request model the signal's name calls for. Anything else is
refused with a reason the caller can act on, and the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError
from temporalio import workflow
from temporalio.common import RawValue

from harness.core.problems import describe_invalid
from harness.engine.bounds import delivery_problems
from workflows.patches import DELIVERY_BOUNDS_PATCH

Request = TypeVar("Request", bound=BaseModel)


@dataclass(frozen=True)
class SignalRoute(Generic[Request]):
    """One signal: the request model its payload must be, and what the run does with it."""

    model: type[Request]
    apply: Callable[[Request], object]

    def take(self, name: str, args: Sequence[RawValue]) -> str | None:
        """Apply the signal; the reason it was refused, or None when it was applied."""
        request = self._read(name, args)
        if isinstance(request, str):
            return request
        out_of_range = delivery_problems(request)
        if out_of_range and workflow.patched(DELIVERY_BOUNDS_PATCH):
            return f"signal '{name}' is out of range: " + "; ".join(out_of_range)
        self.apply(request)
        return None

    def _read(self, name: str, args: Sequence[RawValue]) -> Request | str:
        """The request, or why there is none. No payload at all means the model's defaults
        when it has them for every field (a bare `cancel`)."""
        expected = self.model.__name__
        if not args:
            try:
                return self.model()
            except ValidationError:
                return f"signal '{name}' needs exactly one {expected} payload; it had 0"
        if len(args) != 1:
            return f"signal '{name}' needs exactly one {expected} payload; it had {len(args)}"
        try:
            request = workflow.payload_converter().from_payload(args[0].payload, self.model)
        except ValidationError as error:
            problems = describe_invalid(error, whole=expected)
            return f"signal '{name}': the payload is not a valid {expected}: {problems}"
        except Exception as error:  # an encoding this converter cannot read as the model
            return f"signal '{name}': the payload cannot be read as a {expected}: {error}"
        if not isinstance(request, self.model):  # e.g. a null payload
            return f"signal '{name}': the payload is {type(request).__name__}, not a {expected}"
        return request


def take_signal(
    routes: dict[str, SignalRoute[Any]], name: str, args: Sequence[RawValue]
) -> str | None:
    """Route a signal by name; the reason it was refused, or None when it was applied."""
    route = routes.get(name)
    if route is None:
        return f"this run has no signal '{name}'; it takes {', '.join(sorted(routes))}"
    return route.take(name, args)
