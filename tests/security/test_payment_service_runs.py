"""Finding F5 end to end: with the payment service authenticating its callers, a refund run's
worker (which finds the token as the service does, from the state directory) pays the refund
exactly once, a second run for the same order pays nothing, and no one without the token can
list what was paid."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.llm import ProviderRegistry, ScriptedProvider
from harness.engine.run import RunPhase
from payments.api import NotAuthorizedError, PaymentsClient
from payments.secret import SECRET_FILE_NAME
from tests.payment_service import payment_service
from tests.scenarios.test_refund_runs import approve, finished, start_refund
from worker.app import build_worker, default_services

pytestmark = pytest.mark.requires_local_server(
    "the payment service reports in real time; skipped time expires its wait first"
)


async def test_refunds_scenario_runs_still_pay_exactly_once_end_to_end(
    client: Client, task_queue: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with payment_service(client, tmp_path) as service:
        monkeypatch.setenv("HARNESS_PAYMENTS_URL", service.url)
        registry = ProviderRegistry.always(ScriptedProvider())
        # No token is handed to the worker: it reads the one the service created.
        async with build_worker(client, task_queue, registry, services=default_services()):
            handle = await start_refund(client, task_queue)
            await approve(handle)
            first = await finished(client, handle)
            second = await finished(client, await start_refund(client, task_queue))
        paid = await service.payments("A-1001")
        with pytest.raises(NotAuthorizedError):
            await PaymentsClient(service.url, "not-the-services-token-at-all").payments()
    assert first.status is RunPhase.SUCCEEDED, first.error
    assert second.status is RunPhase.SUCCEEDED, second.error
    assert [n.tool for n in second.nodes if n.id == "refund"] == ["find_refund"]
    assert [(p.amount_cents, p.run_id) for p in paid] == [(6480, handle.id)]
    assert paid[0].idempotency_key == service.client.idempotency_key(handle.id, "refund")
    assert (Path(os.environ["HARNESS_STATE_DIR"]) / SECRET_FILE_NAME).exists()
