"""The workers' own codec inflates a compressed payload only up to a bound (issue 33, F10): a
zlib bomb sent as a workflow's input or a signal costs a worker at most that much memory."""

from __future__ import annotations

import zlib

from temporalio.api.common.v1 import Payload

from infra.converter import ENCODING, MAX_INFLATED_BYTES, CompressLargePayloads


def _compressed(inner: Payload) -> Payload:
    return Payload(
        metadata={"encoding": ENCODING}, data=zlib.compress(inner.SerializeToString(), 9)
    )


async def test_a_payload_that_would_inflate_past_the_bound_stays_as_it_came() -> None:
    bomb = _compressed(
        Payload(metadata={"encoding": b"json/plain"}, data=b"0" * (MAX_INFLATED_BYTES + 1))
    )
    assert bomb.ByteSize() < 2 * 1024 * 1024  # fits in one Temporal payload

    [decoded] = await CompressLargePayloads().decode([bomb])

    assert decoded is bomb


async def test_a_payload_within_the_bound_is_inflated_to_what_was_compressed() -> None:
    original = Payload(metadata={"encoding": b"json/plain"}, data=b'"' + b"x" * 300_000 + b'"')

    [decoded] = await CompressLargePayloads().decode([_compressed(original)])

    assert decoded == original


async def test_a_truncated_stream_stays_as_it_came() -> None:
    whole = _compressed(Payload(metadata={"encoding": b"json/plain"}, data=b"1" * 200_000))
    cut = Payload(metadata={"encoding": ENCODING}, data=whole.data[: len(whole.data) // 2])

    [decoded] = await CompressLargePayloads().decode([cut])

    assert decoded is cut
