"""Signed actors: the rules of who may speak in a run that has actor keys, with real Ed25519."""

from __future__ import annotations

import pytest

from harness.waits.deliveries import AnswerRequest, ApprovalRequest, CancelRequest, DeliverRequest
from harness.waits.signatures import signature_problem, signed_message
from harness.waits.wait_book import Decision, WaitKind
from infra.signing import new_private_key, public_key, sign, verify

OPS = new_private_key()
MALLORY = new_private_key()
KEYS = {"human:ops": public_key(OPS), "system:payments": public_key(new_private_key())}
RUN = "run-1"


def signed(request: ApprovalRequest, key: str = OPS, run_id: str = RUN) -> ApprovalRequest:
    return request.model_copy(update={"signature": sign(key, signed_message(run_id, request))})


def problem(request: object, kind: WaitKind | None, keys: dict[str, str] = KEYS) -> str | None:
    assert isinstance(request, ApprovalRequest | AnswerRequest | DeliverRequest)
    return signature_problem(RUN, request, kind, keys, verify)


APPROVAL = ApprovalRequest(wait_id="approve-refund", actor="human:ops")


def test_a_run_without_keys_takes_every_delivery_as_before() -> None:
    assert problem(APPROVAL, WaitKind.APPROVAL, keys={}) is None


def test_an_approval_signed_by_its_actor_is_taken() -> None:
    assert problem(signed(APPROVAL), WaitKind.APPROVAL) is None


def test_an_unsigned_approval_is_refused() -> None:
    assert "must carry its signature" in str(problem(APPROVAL, WaitKind.APPROVAL))


def test_an_approval_in_the_name_of_an_actor_without_a_key_is_refused() -> None:
    forged = signed(APPROVAL.model_copy(update={"actor": "human:mallory"}), MALLORY)
    assert "human:mallory has no key in this run" in str(problem(forged, WaitKind.APPROVAL))


@pytest.mark.parametrize(
    "forged",
    [
        signed(APPROVAL, MALLORY),
        signed(APPROVAL, run_id="run-2"),
        signed(APPROVAL).model_copy(update={"decision": Decision.REJECT}),
        signed(APPROVAL).model_copy(update={"comment": "added later"}),
        APPROVAL.model_copy(update={"signature": "bm90IGEgc2lnbmF0dXJl"}),
        APPROVAL.model_copy(update={"signature": "%%% not base64"}),
    ],
    ids=["another key", "another run", "another decision", "another comment", "junk", "not b64"],
)
def test_a_signature_that_is_not_the_actors_for_this_delivery_is_refused(
    forged: ApprovalRequest,
) -> None:
    assert "is not human:ops's for this delivery" in str(problem(forged, WaitKind.APPROVAL))


def test_a_payment_outcome_from_someone_without_a_key_is_refused() -> None:
    forged = DeliverRequest(operation_id="pay-1", data={"status": "paid"}, actor="human:mallory")
    assert "an ASYNC_OPERATION delivery must be signed" in str(
        problem(forged, WaitKind.ASYNC_OPERATION)
    )


def test_an_answer_needs_a_signature_only_from_an_actor_that_has_a_key() -> None:
    anyone = AnswerRequest(wait_id="question-1", text="Paris", actor="human:ana")
    as_ops = AnswerRequest(wait_id="question-1", text="Paris", actor="human:ops")
    assert problem(anyone, WaitKind.USER_INPUT) is None
    assert "must carry its signature" in str(problem(as_ops, WaitKind.USER_INPUT))


@pytest.mark.parametrize("variant", ["Human:ops", "human: ops", "human:ops ", " HUMAN:ops"])
def test_no_spelling_of_a_keyed_actor_speaks_without_its_signature(variant: str) -> None:
    answer = AnswerRequest(wait_id="question-1", text="Paris", actor=variant)
    assert "must carry its signature" in str(problem(answer, WaitKind.USER_INPUT))


def test_a_cancel_in_the_name_of_a_keyed_actor_needs_its_signature() -> None:
    cancel = CancelRequest(reason="stop", actor="human:ops")
    assert "must carry its signature" in str(signature_problem(RUN, cancel, None, KEYS, verify))
    anyone = CancelRequest(reason="stop", actor="human:ana")
    assert signature_problem(RUN, anyone, None, KEYS, verify) is None
