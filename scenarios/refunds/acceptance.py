"""The refunds scenario's completion gates: what a refund task's submission must rest on.

`dispute-status-checked` asks the reference chain: the submission rests on a result of
`check_dispute_status`. `payment-verified` asks the payment service: every refund the
submission rests on was really paid, under the idempotency key of the run and node that asked.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.governance.gates import GateInput
from payments.api import NotAuthorizedError, PaymentsClient, PaymentStatus, UnavailableError
from scenarios.base import AcceptanceCheck, CheckVerdict
from scenarios.refunds.tools import PAYMENTS, legacy_idempotency_key

DISPUTE_TOOL = "check_dispute_status"
REFUND_TOOL = "submit_refund"


async def dispute_status_checked(given: GateInput, services: Mapping[str, object]) -> CheckVerdict:
    checked = given.results_of(DISPUTE_TOOL)
    if not checked:
        return CheckVerdict(
            passed=False,
            reason=f"the submission rests on no {DISPUTE_TOOL} result: the dispute status "
            "was not checked",
        )
    return CheckVerdict(passed=True, reason=f"the dispute status was checked ({checked[0].id})")


async def payment_verified(given: GateInput, services: Mapping[str, object]) -> CheckVerdict:
    refunds = [e for e in given.results_of(REFUND_TOOL) if e.node_id]
    if not refunds:
        return CheckVerdict(passed=False, reason=f"the submission rests on no {REFUND_TOOL} result")
    service = services.get(PAYMENTS)
    if not isinstance(service, PaymentsClient):
        return CheckVerdict(passed=False, reason="this worker has no payment service client")
    for evidence in refunds:
        if evidence.run_id is None or evidence.node_id is None:
            return CheckVerdict(
                passed=False, reason=f"{evidence.id} names no run and node to look its refund up"
            )
        try:
            # the refund tool's key (keyed with the token), or the one it used before
            key = service.idempotency_key(evidence.run_id, evidence.node_id)
            payment = await service.payment_by_key(key) or await service.payment_by_key(
                legacy_idempotency_key(evidence.run_id, evidence.node_id)
            )
        except UnavailableError as error:
            return CheckVerdict(passed=False, reason=f"the payment service did not answer: {error}")
        except NotAuthorizedError as error:
            return CheckVerdict(passed=False, reason=f"the payment service refused: {error}")
        if payment is None:
            return CheckVerdict(
                passed=False,
                reason=f"the payment service has no refund under {key} ({evidence.id})",
            )
        if payment.status is not PaymentStatus.PAID:
            return CheckVerdict(
                passed=False,
                reason=f"refund {payment.operation_id} ({evidence.id}) is "
                f"{payment.status.value}, not paid",
            )
    return CheckVerdict(
        passed=True, reason=f"{len(refunds)} refund(s) paid, as the payment service says"
    )


ACCEPTANCE_CHECKS = (
    AcceptanceCheck(
        id="dispute-status-checked",
        description="The submission rests on a check_dispute_status result.",
        judge=dispute_status_checked,
    ),
    AcceptanceCheck(
        id="payment-verified",
        description="Every refund the submission rests on is paid at the payment service.",
        judge=payment_verified,
    ),
)
