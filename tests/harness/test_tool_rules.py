"""The domain's rules for tools of one's own: which names are reserved, how a code is named, and
that a result schema, unset, leaves a catalog's payload as it was."""

from __future__ import annotations

import pytest

from harness.catalog.tools import ToolSpec, reserved_name_reason
from harness.core.errors import ErrorCode, ToolError, error_code_named


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("harness_task_status", "names starting with 'harness_' are the harness's own"),
        ("write_report", "'write_report' is the name of a built-in tool"),
        ("agent", "'agent' is the name of a built-in tool"),
        ("agents", None),
        ("report_writer", None),
        ("my_harness_tool", None),
    ],
)
def test_a_name_is_reserved_for_the_harness_or_its_built_in_tools(
    name: str, reason: str | None
) -> None:
    assert reserved_name_reason(name) == reason


def test_an_error_code_is_named_by_the_enum_or_its_name() -> None:
    assert error_code_named(ErrorCode.TIMEOUT) is ErrorCode.TIMEOUT
    assert error_code_named("RATE_LIMITED") is ErrorCode.RATE_LIMITED


def test_a_name_that_is_no_code_is_refused_with_the_closest_and_every_code() -> None:
    with pytest.raises(ValueError) as refused:
        error_code_named("TIME_OUT")
    message = str(refused.value)
    assert message.startswith("'TIME_OUT' is not an error code; did you mean 'TIMEOUT'? (codes: ")
    assert all(code.value in message for code in ErrorCode)


def test_a_name_far_from_every_code_is_refused_without_a_guess() -> None:
    with pytest.raises(ValueError, match=r"^'x' is not an error code \(codes: "):
        error_code_named("x")


def test_a_tool_error_named_by_its_code_carries_the_enum() -> None:
    error = ToolError("ALREADY_DONE", "refunded by an earlier run")
    assert (error.code, error.message) == (ErrorCode.ALREADY_DONE, "refunded by an earlier run")


def test_a_result_schema_is_left_out_of_the_payload_until_set() -> None:
    plain = ToolSpec(name="t", description="d", arguments_schema={"type": "object"})
    typed = plain.model_copy(update={"result_schema": {"type": "object"}})
    assert "result_schema" not in plain.model_dump_json()
    assert ToolSpec.model_validate_json(typed.model_dump_json()) == typed
