"""Large payloads are compressed, small ones stay plain JSON for the UI and external senders."""

from __future__ import annotations

from temporalio.api.common.v1 import Payload
from temporalio.client import Client

from harness.engine.run import RunPhase, RunRequest
from infra.converter import COMPRESS_ABOVE_BYTES, ENCODING, CompressLargePayloads
from tests.factories import collect, node, synthetic_plan
from tests.support import execute_run, history_events, running_worker


async def test_small_payloads_pass_through_and_large_ones_round_trip_compressed() -> None:
    codec = CompressLargePayloads()
    small = Payload(metadata={"encoding": b"json/plain"}, data=b'{"a": 1}')
    large = Payload(metadata={"encoding": b"json/plain"}, data=b"x" * (COMPRESS_ABOVE_BYTES + 1))
    encoded = await codec.encode([small, large])
    assert encoded[0] == small
    assert encoded[1].metadata["encoding"] == ENCODING
    assert encoded[1].ByteSize() < large.ByteSize() // 10
    assert await codec.decode(encoded) == [small, large]


async def test_a_run_with_a_large_result_completes_with_it_compressed_in_history(
    client: Client, task_queue: str
) -> None:
    big = "y" * (COMPRESS_ABOVE_BYTES * 2)
    plan = synthetic_plan(node("big", "echo", value=big), collect("final", ["big"]))
    async with running_worker(client, task_queue):
        result = await execute_run(
            client, task_queue, RunRequest(goal="big", scenario="synthetic", plan=plan)
        )
    assert result.status is RunPhase.SUCCEEDED
    assert result.nodes[0].result == {"value": big}
    events = await history_events(client, result.run_id)
    started = events[0].workflow_execution_started_event_attributes.input.payloads[0]
    assert started.metadata["encoding"] == ENCODING
