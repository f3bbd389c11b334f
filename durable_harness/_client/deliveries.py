"""CLI commands for durable waits: list them, approve, answer, deliver results, cancel a run."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, JsonValue, ValidationError
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from durable_harness._client.input_files import read_json, read_text_file
from durable_harness.exceptions import HarnessError, InvalidInput, NotFound, RunFailed, Unavailable
from harness.core.actors import ActorKind, parse_actor
from harness.core.problems import describe_invalid
from harness.engine.bounds import delivery_problems
from harness.engine.contracts import ANSWER_UPDATE, APPROVE_UPDATE, DELIVER_UPDATE
from harness.waits.deliveries import AnswerRequest, ApprovalRequest, CancelRequest, DeliverRequest
from harness.waits.wait_book import Decision, DeliveryReceipt, Wait, WaitStatus
from harness.waits.wait_hints import harness_command
from workflows import AgentRunWorkflow

RequestT = TypeVar("RequestT", bound=BaseModel)

PENDING_QUERY = 'ExecutionStatus="Running" AND HarnessPendingWaits > 0'


def check_actor(actor: str) -> str:
    try:
        parse_actor(actor)
    except ValueError as error:
        raise InvalidInput(str(error)) from error
    return actor


def read_data(text: str) -> JsonValue:
    """`--data` is JSON, or @FILE holding JSON."""
    source = text
    if text.startswith("@"):
        source = read_text_file(text[1:], text[1:])
    return read_json(source, "--data")


async def pending_waits(client: Client, run_id: str | None) -> dict[str, list[Wait]]:
    """Pending waits of one run, or of every running run that has any (a visibility query)."""
    try:
        listed = [] if run_id else [wf.id async for wf in client.list_workflows(PENDING_QUERY)]
    except RPCError as error:
        raise InvalidInput(
            f"cannot list runs with pending waits ({error.message}); name a run id, or start "
            "the server with `harness server`, which registers the Harness* search attributes"
        ) from error
    run_ids = [run_id] if run_id else listed
    found: dict[str, list[Wait]] = {}
    for rid in run_ids:
        try:
            waits = await client.get_workflow_handle(rid).query(AgentRunWorkflow.waits)
        except RPCError as error:
            if run_id:
                raise InvalidInput(
                    f"cannot read the waits of run '{rid}': {error.message}"
                ) from error
            continue
        pending = [wait for wait in waits if wait.status is WaitStatus.PENDING]
        if pending or run_id:
            found[rid] = pending
    return found


Request = ApprovalRequest | AnswerRequest | DeliverRequest
_UPDATE_OF: dict[type[Request], str] = {
    ApprovalRequest: APPROVE_UPDATE,
    AnswerRequest: ANSWER_UPDATE,
    DeliverRequest: DELIVER_UPDATE,
}


def approval(wait_id: str, actor: str, reject: bool, comment: str | None) -> ApprovalRequest:
    decision = Decision.REJECT if reject else Decision.APPROVE
    kind, _ = parse_actor(check_actor(actor))
    if kind is ActorKind.AGENT and decision is Decision.APPROVE:
        raise InvalidInput(f"{actor} is an agent; agents can never approve")
    return _checked(
        ApprovalRequest, wait_id=wait_id, decision=decision, actor=actor, comment=comment
    )


def answer(wait_id: str, text: str, actor: str) -> AnswerRequest:
    return _checked(AnswerRequest, wait_id=wait_id, text=text, actor=actor)


def delivery(
    wait_id: str | None, operation: str | None, event: str | None, data: JsonValue, actor: str
) -> DeliverRequest:
    """`data` as given (from a program), or read from `--data` with `read_data` first."""
    fields = {"wait_id": wait_id, "operation_id": operation, "event": event, "actor": actor}
    return _checked(DeliverRequest, data=data, **fields)


def _checked(model: type[RequestT], **fields: Any) -> RequestT:
    """The request, or one line that says what to fix (checked before anything is sent)."""
    check_actor(str(fields.get("actor")))
    try:
        request = model(**fields)
    except ValidationError as error:
        raise InvalidInput(describe_invalid(error, whole=model.__name__)) from error
    problems = delivery_problems(request) + _blank_problems(request)
    if problems:
        raise InvalidInput("; ".join(problems))
    return request


def _blank_problems(request: BaseModel) -> list[str]:
    """What the CLI refuses before sending, beyond the run's own bounds: names and answers of
    spaces only. (Not in harness.engine.bounds: signals are checked with those bounds again on
    replay, and runs that took a blank name once must replay as they ran.)"""
    problems = []
    for name in ("wait_id", "operation_id", "event"):
        value = getattr(request, name, None)
        if isinstance(value, str) and not value.strip():
            problems.append(f"{name}: must not be empty")
    if isinstance(request, AnswerRequest) and not request.text.strip():
        problems.append("text: an answer needs words, not only spaces")
    return problems


async def send(client: Client, run_id: str, request: Request) -> DeliveryReceipt:
    return await _update(client, run_id, _UPDATE_OF[type(request)], request)


def cancellation(reason: str, actor: str) -> CancelRequest:
    return _checked(CancelRequest, reason=reason, actor=actor)


async def cancel(client: Client, run_id: str, request: CancelRequest) -> None:
    """Temporal's own cancellation, so the run ends Canceled (the `cancel` signal alone cannot
    end it so); the reason, with the actor, is the run's recorded reason."""
    handle = client.get_workflow_handle(run_id)
    try:
        await handle.cancel(reason=f"{request.reason} (by {request.actor})")
    except RPCError as error:
        raise _rpc_failure(error)(f"cannot cancel run '{run_id}': {error.message}") from error


async def _update(
    client: Client,
    run_id: str,
    name: str,
    request: ApprovalRequest | AnswerRequest | DeliverRequest,
) -> DeliveryReceipt:
    handle = client.get_workflow_handle(run_id)
    try:
        receipt: DeliveryReceipt = await handle.execute_update(
            name, request, result_type=DeliveryReceipt
        )
    except WorkflowUpdateFailedError as error:
        cause = error.cause.message if hasattr(error.cause, "message") else str(error.cause)
        raise RunFailed(f"run '{run_id}' refused the delivery: {cause}") from error
    except RPCError as error:
        message = f"cannot deliver to run '{run_id}': {error.message}"
        raise _rpc_failure(error)(message) from error
    return receipt


def _rpc_failure(error: RPCError) -> type[HarnessError]:
    """Unavailable when the server could not be reached (exit 3, as for every command); else
    what was asked: no such run, or a request the server refused (exit 2)."""
    if error.status is RPCStatusCode.UNAVAILABLE:
        return Unavailable
    return NotFound if error.status is RPCStatusCode.NOT_FOUND else InvalidInput


def describe_wait(run_id: str, wait: Wait) -> str:
    deadline = f" (until {wait.deadline:%Y-%m-%d %H:%M:%S} UTC)" if wait.deadline else ""
    hint = harness_command(run_id, wait)
    return f"{run_id}  {wait.id}  {wait.kind.value}  {wait.prompt}{deadline}\n    -> {hint}"
