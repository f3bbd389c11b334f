"""The outbox: settles pending payments and reports every outcome to its run by the `deliver`
signal until Temporal has accepted it, signed as `system:payments` when the service has a key.
The ledger says what is still to report, so a report survives a crash of this process or of any
worker; a run that no longer exists is given up."""

from __future__ import annotations

import asyncio
import logging
import time

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from harness.engine.contracts import DELIVER_SIGNAL
from harness.waits.deliveries import DeliverRequest
from harness.waits.signatures import signed_message
from infra.signing import sign
from payments.api import Payment, PaymentOutcome
from payments.ledger import PaymentLedger

log = logging.getLogger(__name__)

ACTOR = "system:payments"
POLL_SECONDS = 0.1
RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)


class Outbox:
    def __init__(
        self,
        ledger: PaymentLedger,
        client: Client,
        actor: str = ACTOR,
        private_key: str | None = None,
    ) -> None:
        self._ledger = ledger
        self._client = client
        self._actor = actor
        self._private_key = private_key
        self._failures: dict[str, int] = {}

    async def run(self) -> None:
        """Until cancelled: an error in one round (a ledger locked too long, a server that
        answers oddly) is logged and the next round tries again, so reporting never stops."""
        while True:
            try:
                await self.drain()
            except Exception:
                log.exception("the outbox round failed; trying again")
                await asyncio.sleep(RETRY_SECONDS[-1])
            await asyncio.sleep(POLL_SECONDS)

    async def drain(self) -> None:
        now = time.time()
        await asyncio.to_thread(self._ledger.settle_due, now)
        for payment in await asyncio.to_thread(self._ledger.unreported, now):
            await self._report(payment)

    async def _later(self, payment: Payment, why: str) -> None:
        failures = self._failures.get(payment.operation_id, 0)
        self._failures[payment.operation_id] = failures + 1
        delay = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
        log.warning(
            "reporting %s to run %s failed (%s); again in %.1f s",
            payment.operation_id,
            payment.run_id,
            why,
            delay,
        )
        await asyncio.to_thread(
            self._ledger.report_later, payment.operation_id, time.time() + delay
        )

    async def _report(self, payment: Payment) -> None:
        request = DeliverRequest(
            operation_id=payment.operation_id,
            data=PaymentOutcome.of(payment).model_dump(mode="json"),
            actor=self._actor,
        )
        if self._private_key is not None:
            message = signed_message(payment.run_id, request)
            request = request.model_copy(update={"signature": sign(self._private_key, message)})
        try:
            await self._client.get_workflow_handle(payment.run_id).signal(DELIVER_SIGNAL, request)
        except RPCError as error:
            if error.status is RPCStatusCode.NOT_FOUND:
                log.warning(
                    "run %s is gone; outcome of %s not reported: %s",
                    payment.run_id,
                    payment.operation_id,
                    error.message,
                )
                await asyncio.to_thread(self._ledger.mark_reported, payment.operation_id)
                return
            await self._later(payment, error.message)
            return
        except Exception as error:  # Temporal not reachable (yet): keep it for a later round
            await self._later(payment, str(error))
            return
        self._failures.pop(payment.operation_id, None)
        await asyncio.to_thread(self._ledger.mark_reported, payment.operation_id)
        log.info(
            "reported %s (%s) to run %s", payment.operation_id, payment.status.value, payment.run_id
        )
