"""The one data converter: pydantic JSON, with large payloads compressed.

Payloads under the threshold stay plain JSON, so the Temporal UI and the `temporal` CLI read
them as they are and external systems can send plain JSON signals. Larger ones (the result of a
run with thousands of nodes, a wide batch's input) are zlib-compressed, which keeps them far
below Temporal's 2 MB payload limit. Every client, worker and replayer must use this converter.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Sequence
from typing import Any

from google.protobuf.message import DecodeError
from pydantic import ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.api.failure.v1 import Failure
from temporalio.contrib.pydantic import PydanticPayloadConverter, pydantic_data_converter
from temporalio.converter import (
    DataConverter,
    DefaultFailureConverter,
    PayloadCodec,
    PayloadConverter,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)
from temporalio.exceptions import ApplicationError

from harness.core.problems import article, describe_invalid
from harness.engine.run import RunRequest, UnreadableRunRequestError
from harness.evals.eval_report import EvalRequest, UnreadableEvalRequestError

COMPRESS_ABOVE_BYTES = 128 * 1024
ENCODING = b"binary/zlib"
MAX_INFLATED_BYTES = 128 * 1024 * 1024
"""The most one compressed payload may inflate to: far above the largest the harness writes (a
20,000-node run's result is about 30 MB of JSON), far below what a 2 MB zlib bomb would take
(about 2 GB)."""


class CompressLargePayloads(PayloadCodec):
    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._encode(payload) for payload in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self._decode(payload) for payload in payloads]

    @staticmethod
    def _encode(payload: Payload) -> Payload:
        if payload.ByteSize() < COMPRESS_ABOVE_BYTES:
            return payload
        return Payload(
            metadata={"encoding": ENCODING},
            data=zlib.compress(payload.SerializeToString(), level=6),
        )

    @staticmethod
    def _decode(payload: Payload) -> Payload:
        """A payload that claims to be compressed but is not, or that would inflate past
        MAX_INFLATED_BYTES, stays as it came: decoding runs before any handler, so raising here
        would fail the workflow task on every retry; the handler refuses an encoding it cannot
        read instead. Inflation stops at the bound, so a bomb costs at most that much memory."""
        if payload.metadata.get("encoding") != ENCODING:
            return payload
        inflater = zlib.decompressobj()
        try:
            data = inflater.decompress(payload.data, MAX_INFLATED_BYTES)
            if inflater.unconsumed_tail or not inflater.eof:
                return payload
            original = Payload()
            original.ParseFromString(data)
        except (zlib.error, DecodeError):
            return payload
        return original


UNREADABLE: dict[type, type[ValueError]] = {
    RunRequest: UnreadableRunRequestError,
    EvalRequest: UnreadableEvalRequestError,
}
"""The workflow inputs whose workflows fail, with the reason, when the input does not decode."""


class HarnessPayloadConverter(PydanticPayloadConverter):
    """Pydantic JSON; a run's (or an eval's) input that is not a RunRequest (an EvalRequest) is
    named as such, so the workflow fails with the reason (its `failure_exception_types`) instead
    of failing its first task forever. Every other decoding error is left as it is."""

    def from_payloads(
        self, payloads: Sequence[Payload], type_hints: list[type] | None = None
    ) -> list[Any]:
        try:
            return super().from_payloads(payloads, type_hints)
        except ValidationError as error:
            model = next((hint for hint in type_hints or [] if hint in UNREADABLE), None)
            if model is None:
                raise
            name = model.__name__
            reason = describe_invalid(error, whole=name)
            raise UNREADABLE[model](f"not {article(name)} {name}: {reason}") from None


class OneLineWorkflowFailures(DefaultFailureConverter, WithSerializationContext):
    """A failure the workflow code decides (a run that ends BUDGET_EXHAUSTED or FAILED_*, a
    session's or an agent loop's end, an update refused: a non-retryable ApplicationError made
    in the workflow) is one line: no stack trace, whose frames would be the SDK's sandbox in the
    venv, and no cause chain. The Temporal UI shows it as its failure. Activities' failures, and
    the workflow's own bugs (which fail its task, not the workflow), keep their stack traces.
    Replay compares no failure's text, so recorded histories replay as before."""

    def __init__(self, *, in_workflow: bool = False) -> None:
        super().__init__()
        self._in_workflow = in_workflow

    def with_context(self, context: SerializationContext) -> OneLineWorkflowFailures:
        return OneLineWorkflowFailures(
            in_workflow=isinstance(context, WorkflowSerializationContext)
        )

    def to_failure(
        self, exception: BaseException, payload_converter: PayloadConverter, failure: Failure
    ) -> None:
        super().to_failure(exception, payload_converter, failure)
        if self._in_workflow and decided(exception):
            failure.message = " ".join(failure.message.split())
            failure.stack_trace = ""
            failure.ClearField("cause")


def decided(exception: BaseException) -> bool:
    """Raised on purpose by workflow code: a non-retryable ApplicationError made there, not one
    carried from an activity or a child (those hold their own failure)."""
    return (
        isinstance(exception, ApplicationError)
        and exception.non_retryable
        and exception.failure is None
    )


DATA_CONVERTER: DataConverter = dataclasses.replace(
    pydantic_data_converter,
    payload_converter_class=HarnessPayloadConverter,
    payload_codec=CompressLargePayloads(),
    failure_converter_class=OneLineWorkflowFailures,
)
