"""The run's deliveries: its signals, read defensively, and what its updates take.

A signal handler that raises fails the workflow task, and a task that fails on a signal fails
again on every retry: the run would never take another signal, not even a cancel. So the run
takes every signal through one dynamic handler, with its payloads as raw values, and reads them
here: exactly one payload, of the request model the signal's name calls for. Anything else is
refused with a reason the caller can act on, and the run goes on.

`Intake` is what the run's message handlers hand their requests to: the signals (held until the
run has decided its rules), the approve, answer and deliver updates and their validators, and
the check of signed actors, so the workflow class stays its handlers' names and the run itself.
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
from harness.engine.contracts import ANSWER_SIGNAL, APPROVE_SIGNAL, CANCEL_SIGNAL, DELIVER_SIGNAL
from harness.waits.deliveries import AnswerRequest, ApprovalRequest, CancelRequest, DeliverRequest
from harness.waits.signatures import SIGNED_KINDS, SIGNED_KINDS_WITH_ANSWERS, signature_problem
from harness.waits.wait_book import DeliveryReceipt, WaitKind
from workflows.actor_signatures import verify
from workflows.patches import DELIVERY_BOUNDS_PATCH, EARLY_SIGNALS_PATCH
from workflows.run_context import RunContext

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


class Intake:
    """One run's deliveries: what its signal and update handlers hand over."""

    def __init__(self, ctx: RunContext, cancel: Callable[[CancelRequest], None]) -> None:
        """`cancel`: what the run does with a cancel signal that may speak in it."""
        self._ctx = ctx
        self._routes: dict[str, SignalRoute[Any]] = {
            APPROVE_SIGNAL: SignalRoute(ApprovalRequest, self.approve),
            ANSWER_SIGNAL: SignalRoute(AnswerRequest, self.answer),
            DELIVER_SIGNAL: SignalRoute(DeliverRequest, self.deliver),
            CANCEL_SIGNAL: SignalRoute(CancelRequest, cancel),
        }
        self._signed_kinds = SIGNED_KINDS
        """What a keyed run takes only signed (answers too since 0.10: see sign_answers)."""
        self._rules_decided = False
        self._early: list[tuple[str, Sequence[RawValue]]] = []
        """Signals that came before the rules were decided (EARLY_SIGNALS_PATCH)."""

    def sign_answers(self) -> None:
        """A keyed run since 0.10 takes answers only signed, as it takes approvals."""
        self._signed_kinds = SIGNED_KINDS_WITH_ANSWERS

    def signal(self, name: str, args: Sequence[RawValue]) -> None:
        """Any signal; one that comes before the run has decided its rules waits for them."""
        if not self._rules_decided and workflow.patched(EARLY_SIGNALS_PATCH):
            self._early.append((name, list(args)))
            return
        self._take(name, args)

    def rules_decided(self) -> None:
        """The rules are decided: the signals that waited for them are taken, in order."""
        self._rules_decided = True
        early, self._early = self._early, []
        for name, args in early:
            self._take(name, args)

    def _take(self, name: str, args: Sequence[RawValue]) -> None:
        refusal = take_signal(self._routes, name, args)
        if refusal is not None:
            workflow.logger.warning("signal refused: %s", refusal)
            self._ctx.desk.refuse(refusal, {"signal": name, "payloads": len(args)})

    def approve(self, request: ApprovalRequest) -> DeliveryReceipt:
        return self._ctx.desk.deliver_signed(request, request.delivery(), self.unsigned)

    def answer(self, request: AnswerRequest) -> DeliveryReceipt:
        return self._ctx.desk.deliver_signed(request, request.delivery(), self.unsigned)

    def deliver(self, request: DeliverRequest) -> DeliveryReceipt:
        delivery = self._ctx.desk.targeted(request)
        return self._ctx.desk.deliver_signed(request, delivery, self.unsigned)

    def deliver_kind(self, request: DeliverRequest) -> WaitKind:
        """The kind only decides whether a signature is needed: read without the run's patch
        markers (a validator may not add any); the handler delivers under the run's rules."""
        return request.delivery(self._ctx.desk.book).kind

    def refuse_when_finished(self, request: BaseModel, kind: WaitKind) -> None:
        """An update's validator: refuse before acceptance (a refused update leaves no event
        in history)."""
        phase = self._ctx.state.phase
        if phase.is_terminal:
            raise ValueError(f"run {self._ctx.state.run_id} has finished ({phase.value})")
        problems = delivery_problems(request)
        if problems:
            raise ValueError("out of range: " + "; ".join(problems))
        unsigned = self.unsigned(request, kind)
        if unsigned is not None:
            raise ValueError(unsigned)

    def unsigned(self, request: BaseModel, kind: WaitKind | None) -> str | None:
        """Why the request may not speak in this run (signed actors), or None."""
        state = self._ctx.state
        keys = state.request.actor_keys
        if not keys:
            return None
        identity = self._ctx.desk.identity
        return signature_problem(
            state.run_id, request, kind, keys, verify, self._signed_kinds, identity
        )
