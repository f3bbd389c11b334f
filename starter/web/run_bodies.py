"""What the run routes read from a request, checked before anything reaches Temporal: a start's
fields, an approval's or an answer's body, and where a resumed stream picks up. Bad input is
an InvalidInput: one line that says what to fix (400)."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request

from durable_harness.exceptions import InvalidInput
from harness.core.problems import describe_invalid
from harness.engine.run import RunRequest

START_ONLY = frozenset({"run_id", "planner_model", "worker_model", "judge_model", "agent_model"})
"""`Harness.start`'s own arguments besides the goal; the rest are RunRequest's fields."""
START_FIELDS = (frozenset(RunRequest.model_fields) - {"goal", "models"}) | START_ONLY

BodyT = TypeVar("BodyT", bound=BaseModel)


class ApproveBody(BaseModel):
    """`POST /runs/RUN_ID/waits/WAIT_ID/approve`; no actor: the one the app was started with."""

    model_config = ConfigDict(extra="forbid")
    actor: str | None = None
    reject: bool = False
    comment: str | None = None


class AnswerBody(BaseModel):
    """`POST /runs/RUN_ID/waits/WAIT_ID/answer`."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1)
    actor: str | None = None


def parsed_body(model: type[BodyT], body: bytes) -> BodyT:
    try:
        return model.model_validate_json(body or b"{}")
    except ValidationError as error:
        raise InvalidInput(describe_invalid(error, whole="body")) from None


def start_fields(body: bytes) -> tuple[str, dict[str, Any]]:
    """The goal and the other fields of `POST /runs`'s JSON object, as `Harness.start` takes
    them; a field it does not know is refused by name, not dropped."""
    try:
        fields = json.loads(body or b"null")
    except ValueError as error:
        raise InvalidInput(f"the body is not JSON: {error}") from None
    if not isinstance(fields, dict):
        raise InvalidInput('the body is one JSON object: {"goal": "...", "scenario": "cities"}')
    goal = fields.pop("goal", None)
    if not isinstance(goal, str) or not goal.strip():
        raise InvalidInput('the body needs a "goal": the text of what to do')
    unknown = sorted(set(fields) - START_FIELDS)
    if unknown:
        known = ", ".join(sorted(START_FIELDS))
        raise InvalidInput(f"unknown field(s) {', '.join(unknown)}; known: goal, {known}")
    return goal, fields


def resume_point(request: Request) -> int:
    """Where the stream starts: after the event whose id a reconnecting EventSource sends
    (`Last-Event-ID`), or `?after=ID`; from the first event when neither is given."""
    given = request.headers.get("last-event-id") or request.query_params.get("after")
    if given is None or given == "":
        return 0
    if not given.strip().isdigit():
        raise InvalidInput(f"Last-Event-ID (or ?after=) is an event's id, 0 or more; not {given!r}")
    return int(given) + 1
