"""Delivery messages: what callers send to a run's waits by signal or update.

Each request turns into one `Delivery` that the run's WaitBook judges; the names of the signals
and updates that carry them are in `harness.contracts`.
"""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import BaseModel, Field, JsonValue, field_validator

from harness.wait_book import Decision, Delivery, WaitBook, WaitKind

MAX_NAME_CHARS = 200
MAX_COMMENT_CHARS = 2_000
MAX_ANSWER_CHARS = 10_000
MAX_DATA_BYTES = 256 * 1024
"""A delivery's data as JSON: far below Temporal's 2 MB payload limit, since a run keeps it."""

Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]

DELIVERABLE_KINDS = (WaitKind.ASYNC_OPERATION, WaitKind.EXTERNAL_EVENT, WaitKind.RECONCILE)


class ApprovalRequest(BaseModel):
    """Payload of the `approve` signal and update."""

    wait_id: Name
    decision: Decision = Decision.APPROVE
    actor: Name
    comment: str | None = Field(default=None, max_length=MAX_COMMENT_CHARS)

    def delivery(self) -> Delivery:
        return Delivery(
            wait_id=self.wait_id,
            kind=WaitKind.APPROVAL,
            actor=self.actor,
            decision=self.decision,
            comment=self.comment,
        )


class AnswerRequest(BaseModel):
    """Payload of the `answer` signal and update."""

    wait_id: Name
    text: str = Field(max_length=MAX_ANSWER_CHARS)
    actor: Name = "human:user"

    def delivery(self) -> Delivery:
        return Delivery(
            wait_id=self.wait_id, kind=WaitKind.USER_INPUT, actor=self.actor, payload=self.text
        )


class DeliverRequest(BaseModel):
    """Payload of the `deliver` signal and update: an async result, an event, a reconcile."""

    wait_id: Name | None = None
    operation_id: Name | None = None
    event: Name | None = None
    data: JsonValue = None
    actor: Name = "system:external"

    @field_validator("data")
    @classmethod
    def _data_within_bounds(cls, data: JsonValue) -> JsonValue:
        size = len(json.dumps(data, ensure_ascii=False).encode())
        if size > MAX_DATA_BYTES:
            raise ValueError(f"data is {size} bytes as JSON; at most {MAX_DATA_BYTES} are taken")
        return data

    def delivery(self, book: WaitBook) -> Delivery:
        target = Delivery(
            wait_id=self.wait_id,
            operation_id=self.operation_id,
            event=self.event,
            kind=WaitKind.ASYNC_OPERATION,
            actor=self.actor,
            payload=self.data,
        )
        wait = book.find(target)
        if wait is not None and wait.kind in DELIVERABLE_KINDS:
            target.kind = wait.kind
        return target


class CancelRequest(BaseModel):
    """Payload of the `cancel` signal."""

    reason: str = Field(default="cancelled", max_length=MAX_COMMENT_CHARS)
    actor: Name = "human:user"
