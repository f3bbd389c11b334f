"""Durable waits: what a run is waiting for, and the rules every delivery is held to.

The WaitBook is pure bookkeeping; the workflow owns one and applies each signal or update to it,
so the same deliveries in the same order always give the same state (replay-safe).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, Field, JsonValue

from harness.core.actors import ActorKind, actor_identity, parse_actor
from harness.governance.host_contract import Act


class WaitKind(StrEnum):
    USER_INPUT = "USER_INPUT"
    APPROVAL = "APPROVAL"
    ASYNC_OPERATION = "ASYNC_OPERATION"
    EXTERNAL_EVENT = "EXTERNAL_EVENT"
    TIMER = "TIMER"
    RECONCILE = "RECONCILE"


class WaitStatus(StrEnum):
    PENDING = "PENDING"
    DELIVERED = "DELIVERED"
    REJECTED = "REJECTED"
    EXPIRED = "EXPIRED"
    CANCELLED = "CANCELLED"


class Decision(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"


COMMENT_EXCERPT_CHARS = 200


class Wait(BaseModel):
    id: str
    kind: WaitKind
    node_id: str | None = None
    prompt: str
    operation_id: str | None = None
    event: str | None = None
    created_at: datetime
    deadline: datetime | None = None
    status: WaitStatus = WaitStatus.PENDING
    delivered_by: str | None = None
    delivered_at: datetime | None = None
    payload: JsonValue = None
    decision: Decision | None = None
    comment: str | None = None
    example: JsonValue = Field(
        default=None, description="What a delivery that settles this wait looks like."
    )

    def comment_excerpt(self) -> str:
        """The comment as the run quotes it elsewhere (a node's failure, the planner's context):
        whole when short, else its start and where the whole is kept, once, in this wait."""
        comment = self.comment or ""
        if len(comment) <= COMMENT_EXCERPT_CHARS:
            return comment
        return f"{comment[:COMMENT_EXCERPT_CHARS]}… (the whole comment is in wait {self.id})"


class Delivery(BaseModel):
    """One delivery to a wait. Exactly one of wait_id, operation_id or event names the target."""

    wait_id: str | None = None
    operation_id: str | None = None
    event: str | None = None
    kind: WaitKind
    actor: str = Field(description="human:NAME, system:NAME or agent:NAME")
    decision: Decision | None = None
    payload: JsonValue = None
    comment: str | None = None


class DeliveryReceipt(BaseModel):
    accepted: bool
    duplicate: bool = False
    wait_id: str | None = None
    reason: str
    late: bool = Field(
        default=False,
        description="The wait had closed (expired, cancelled, rejected) before this delivery "
        "came: it is recorded as late and never applied.",
    )


MAX_PARKED = 100
"""At most this many early deliveries in all. Without bounded parking the next one is refused;
with lots by sender the largest lot gives way."""
MAX_PARKED_PER_KIND = 50
PARKED_FOR = timedelta(hours=1)
"""Bounded parking: early results and early events each have a lot of their own; an entry
expires after an hour, and a full lot lets its oldest entry go rather than refuse the newest (a
real early result is the newest: its wait opens moments later)."""
MAX_PARKED_PER_SENDER = 50
"""Lots by sender: what one sender may have parked at once."""
LATE_EXCERPT_CHARS = 500
"""How much of a late delivery's data its trace event keeps (it is never applied)."""


@dataclass(frozen=True)
class DeliveryRules:
    """What a WaitBook holds each delivery to, as plain switches; the defaults are the rules a
    run starts with today. A run keeps the rules it started with, so its history replays: which
    switch a run gets is decided in the workflow layer from its patch markers
    (workflows/wait_desk.py, workflows/patches/run_waits.py), never here."""

    bounded_parking: bool = True
    """Early deliveries name a valid actor, expire after PARKED_FOR and sit in lots whose
    oldest entry gives way when full; opening a wait takes the newest fresh one awaited; a
    delivery by operation id finds the pending wait first, else the latest. Off: at most
    MAX_PARKED are parked and the next is refused, opening a wait takes the first parked, and a
    delivery by operation id finds the first wait opened, even a closed one (so a later
    attempt's wait never got its result)."""
    reconcile_states_outcome: bool = True
    """A RECONCILE delivery says "succeeded" with the result, or "failed"; nothing else."""
    agents_never_reconcile: bool = True
    """What a side effect really did is told by a person or a system, never by the agent that
    asked for it."""
    lots_by_sender: bool = True
    """With bounded parking: each sender has its own lot of MAX_PARKED_PER_SENDER, a full lot
    lets its own oldest entry go, and when all lots together hold MAX_PARKED the largest lot
    gives way, so one sender's junk can neither evict nor crowd out another sender's result; in
    a run with actor keys only a signed delivery parks (`signed` in WaitBook.park). Off: early
    results and early events each have one lot of MAX_PARKED_PER_KIND, shared by all senders."""
    senders_by_identity: bool = True
    """With lots by sender: a sender is told by harness.core.actors.actor_identity, so junk under a
    hundred spellings of one name (`Junk:X`, `JUNK:x` ...) is one lot. Off: by kind and name as
    parsed, so `Human: Ops` and `human:Ops` are one sender but `human:ops` another."""


NEW_RUN_RULES = DeliveryRules()
"""The rules a run started today is held to."""


RECONCILE_OUTCOMES = ("succeeded", "failed")
RECONCILE_PLACEHOLDERS = frozenset({"OPERATION_ID", "RESULT"})
"""What harness.waits.reconcile leaves in an example where the run does not know the value."""


class Parked(BaseModel):
    delivery: Delivery
    at: datetime


class WaitBook:
    def __init__(self) -> None:
        self.waits: dict[str, Wait] = {}
        self.parked: list[Parked] = []
        self.humans_only: frozenset[Act] = frozenset()
        """Acts the run's contract keeps for people: a system may not approve or reconcile."""

    def free_id(self, wanted: str) -> str:
        """`wanted`, or `wanted-2`, `wanted-3`... when a wait of an earlier attempt has it."""
        if wanted not in self.waits:
            return wanted
        number = 2
        while f"{wanted}-{number}" in self.waits:
            number += 1
        return f"{wanted}-{number}"

    def open(self, wait: Wait) -> Wait:
        self.waits[wait.id] = wait
        return wait

    def park(
        self,
        delivery: Delivery,
        now: datetime,
        rules: DeliveryRules = NEW_RUN_RULES,
        signed: bool | None = None,
    ) -> DeliveryReceipt:
        """A result for an operation whose wait is not open yet (the callback beat the tool's
        own completion): keep it, bounded, until the wait opens. `signed`: None in a run
        without actor keys, else whether the delivery carries its keyed actor's signature."""
        target = delivery.operation_id or delivery.event
        if not rules.bounded_parking and len(self.parked) >= MAX_PARKED:
            return DeliveryReceipt(accepted=False, reason="too many early deliveries parked")
        if rules.lots_by_sender and signed is False:
            return DeliveryReceipt(
                accepted=False,
                reason=f"'{target}' is not awaited yet, and this run has actor keys: an early "
                "delivery is kept only when a keyed actor signs it",
            )
        if rules.bounded_parking:
            try:
                parse_actor(delivery.actor)
            except ValueError as error:
                return DeliveryReceipt(accepted=False, reason=str(error))
            if rules.lots_by_sender:
                self._make_room_by_sender(delivery, now, rules.senders_by_identity)
            else:
                self._make_room(delivery, now)
        self.parked.append(Parked(delivery=delivery, at=now))
        return DeliveryReceipt(
            accepted=True, reason=f"'{target}' is not awaited yet; parked until it is"
        )

    def _make_room(self, delivery: Delivery, now: datetime) -> None:
        self.parked = [entry for entry in self.parked if now - entry.at < PARKED_FOR]
        same_lot = [p for p in self.parked if _by_event(p.delivery) == _by_event(delivery)]
        if len(same_lot) >= MAX_PARKED_PER_KIND:
            self.parked.remove(same_lot[0])

    def _make_room_by_sender(self, delivery: Delivery, now: datetime, by_identity: bool) -> None:
        """Room for one more of the sender's deliveries, taken from the sender's own lot when it
        is full, else, when all lots are full, from the largest (its oldest entry)."""
        sender_of = _identity if by_identity else _sender
        self.parked = [entry for entry in self.parked if now - entry.at < PARKED_FOR]
        sender = sender_of(delivery)
        own = [entry for entry in self.parked if sender_of(entry.delivery) == sender]
        if len(own) >= MAX_PARKED_PER_SENDER:
            self.parked.remove(own[0])
        elif len(self.parked) >= MAX_PARKED:
            self.parked.remove(self._oldest_of_largest_lot(sender_of))

    def _oldest_of_largest_lot(self, sender_of: Callable[[Delivery], str]) -> Parked:
        """The oldest entry of the sender with most parked (of those, the one parked first)."""
        sizes = Counter(sender_of(entry.delivery) for entry in self.parked)
        largest = max(sizes.values())
        return next(e for e in self.parked if sizes[sender_of(e.delivery)] == largest)

    def unpark(
        self, wait: Wait, now: datetime, rules: DeliveryRules = NEW_RUN_RULES
    ) -> Delivery | None:
        if not rules.bounded_parking:
            for entry in self.parked:
                if _awaited_by(wait, entry.delivery):
                    self.parked.remove(entry)
                    return entry.delivery.model_copy(update={"kind": wait.kind})
            return None
        fresh = [e for e in self.parked if now - e.at < PARKED_FOR]
        matches = [e for e in fresh if _awaited_by(wait, e.delivery)]
        if not matches:
            return None
        self.parked = [e for e in self.parked if not _awaited_by(wait, e.delivery)]
        return matches[-1].delivery.model_copy(update={"kind": wait.kind})

    def pending(self) -> list[Wait]:
        return [wait for wait in self.waits.values() if wait.status is WaitStatus.PENDING]

    def find(self, delivery: Delivery, rules: DeliveryRules = NEW_RUN_RULES) -> Wait | None:
        """The wait a delivery is for (by operation id: see DeliveryRules.bounded_parking)."""
        if delivery.wait_id is not None:
            return self.waits.get(delivery.wait_id)
        if rules.bounded_parking and delivery.operation_id is not None:
            same = [w for w in self.waits.values() if w.operation_id == delivery.operation_id]
            pending = [w for w in same if w.status is WaitStatus.PENDING]
            candidates = pending or same
            if candidates:
                return candidates[-1]
        for wait in self.waits.values():
            if delivery.operation_id is not None and wait.operation_id == delivery.operation_id:
                return wait
            if (
                delivery.event is not None
                and wait.event == delivery.event
                and (wait.status is WaitStatus.PENDING)
            ):
                return wait
        return None

    def deliver(
        self,
        delivery: Delivery,
        now: datetime,
        rules: DeliveryRules = NEW_RUN_RULES,
        signed: bool | None = None,
    ) -> DeliveryReceipt:
        """Apply `delivery`; anything not accepted changes nothing. `signed` is for an early
        delivery (see park)."""
        wait = self.find(delivery, rules)
        target = delivery.wait_id or delivery.operation_id or delivery.event
        if wait is None:
            if delivery.wait_id is None and (delivery.operation_id or delivery.event):
                return self.park(delivery, now, rules, signed)
            return DeliveryReceipt(accepted=False, reason=f"no wait matches '{target}'")
        problem = _problem(wait, delivery, rules) or self._contract_problem(wait, delivery)
        if problem is not None:
            return DeliveryReceipt(accepted=False, wait_id=wait.id, reason=problem)
        if wait.status is WaitStatus.DELIVERED:
            if _same(wait, delivery):
                return DeliveryReceipt(
                    accepted=True, duplicate=True, wait_id=wait.id, reason="already delivered"
                )
            return DeliveryReceipt(
                accepted=False,
                wait_id=wait.id,
                reason=f"wait '{wait.id}' was already delivered by {wait.delivered_by} "
                "with different content",
            )
        if wait.status is not WaitStatus.PENDING:
            return DeliveryReceipt(
                accepted=False,
                wait_id=wait.id,
                reason=f"wait '{wait.id}' is {wait.status.value}; the late delivery is "
                "quarantined and not applied",
                late=True,
            )
        wait.status = WaitStatus.DELIVERED
        wait.delivered_by = delivery.actor
        wait.delivered_at = now
        wait.payload = delivery.payload
        wait.decision = delivery.decision
        wait.comment = delivery.comment
        return DeliveryReceipt(accepted=True, wait_id=wait.id, reason="delivered")

    def _contract_problem(self, wait: Wait, delivery: Delivery) -> str | None:
        acts = {WaitKind.APPROVAL: Act.APPROVAL, WaitKind.RECONCILE: Act.RECONCILIATION}
        act = acts.get(wait.kind)
        if act is None or act not in self.humans_only:
            return None
        if wait.kind is WaitKind.APPROVAL and delivery.decision is not Decision.APPROVE:
            return None  # refusing is never kept from anyone
        if parse_actor(delivery.actor)[0] is ActorKind.SYSTEM:
            return (
                f"{delivery.actor} is a system, and the run's contract has "
                f"allow_system_{act.value} off: only a person may do {act.value} here"
            )
        return None

    def settled_by_reconcile(self, wait: Wait) -> Wait | None:
        """The delivered RECONCILE wait of `wait`'s node opened after it: what a person (or
        system) said the operation did, which a late result never overrides."""
        if wait.node_id is None:
            return None
        later = [
            other
            for other in self.waits.values()
            if other.node_id == wait.node_id
            and other.kind is WaitKind.RECONCILE
            and other.status is WaitStatus.DELIVERED
            and other.created_at >= wait.created_at
        ]
        return later[-1] if later else None

    def close(self, wait_id: str, status: WaitStatus) -> None:
        wait = self.waits[wait_id]
        if wait.status is WaitStatus.PENDING:
            wait.status = status


def _problem(wait: Wait, delivery: Delivery, rules: DeliveryRules) -> str | None:
    if delivery.kind is not wait.kind:
        return f"wait '{wait.id}' is {wait.kind.value}, not {delivery.kind.value}"
    try:
        actor_kind, _ = parse_actor(delivery.actor)
    except ValueError as error:
        return str(error)
    if wait.kind is WaitKind.APPROVAL:
        if delivery.decision is None:
            return "an approval needs a decision: approve or reject"
        if actor_kind is ActorKind.AGENT and delivery.decision is Decision.APPROVE:
            return f"{delivery.actor} is an agent; agents can never approve"
    if wait.kind is WaitKind.USER_INPUT and not (
        isinstance(delivery.payload, str) and delivery.payload.strip()
    ):
        return "an answer needs non-empty text"
    agent_reconciles = wait.kind is WaitKind.RECONCILE and actor_kind is ActorKind.AGENT
    if agent_reconciles and rules.agents_never_reconcile:
        return f"{delivery.actor} is an agent; agents can never reconcile a side effect"
    if wait.kind is WaitKind.RECONCILE and rules.reconcile_states_outcome:
        return _reconcile_problem(delivery.payload)
    return None


def _reconcile_problem(payload: JsonValue) -> str | None:
    """A reconcile says what really happened: it never guesses, so half an answer is refused."""
    shape = '{"outcome": "succeeded", "result": {...}} or {"outcome": "failed"}'
    if not isinstance(payload, dict) or payload.get("outcome") not in RECONCILE_OUTCOMES:
        return f"a reconcile delivers {shape}"
    if payload["outcome"] == "succeeded" and payload.get("result") is None:
        return 'a reconcile of "succeeded" must carry the result the call produced as "result"'
    left = _placeholders(payload.get("result"))
    if left:
        return f"the result still holds the placeholder {left[0]}: put in what really happened"
    return None


def _placeholders(value: JsonValue) -> list[str]:
    """Placeholders of a reconcile example (harness.waits.reconcile) left in a delivered result."""
    if isinstance(value, str):
        return [value] if value in RECONCILE_PLACEHOLDERS else []
    if isinstance(value, list):
        return [found for item in value for found in _placeholders(item)]
    if isinstance(value, dict):
        return [found for item in value.values() for found in _placeholders(item)]
    return []


def _awaited_by(wait: Wait, delivery: Delivery) -> bool:
    by_operation = wait.operation_id is not None and delivery.operation_id == wait.operation_id
    return by_operation or (wait.event is not None and delivery.event == wait.event)


def _identity(delivery: Delivery) -> str:
    """Who sent it, one identity per actor however spelt (DeliveryRules.senders_by_identity)."""
    return actor_identity(delivery.actor)


def _sender(delivery: Delivery) -> str:
    """Who sent it, by kind and name as parsed: `Human: Ops` and `human:Ops` are one sender, but
    `human:ops` another."""
    try:
        kind, name = parse_actor(delivery.actor)
    except ValueError:
        return delivery.actor
    return f"{kind.value}:{name}"


def late_excerpt(payload: JsonValue) -> str:
    """A late delivery's data as its trace event keeps it: JSON, cut at LATE_EXCERPT_CHARS."""
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True)
    if len(text) <= LATE_EXCERPT_CHARS:
        return text
    return f"{text[:LATE_EXCERPT_CHARS]}… ({len(text)} characters)"


def _by_event(delivery: Delivery) -> bool:
    return delivery.operation_id is None and delivery.event is not None


def _same(wait: Wait, delivery: Delivery) -> bool:
    return wait.decision == delivery.decision and wait.payload == delivery.payload
