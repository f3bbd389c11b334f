"""durable_harness.testing's `call_tool` refuses what the worker's tool activity refuses, in its
words, as the ToolError a pack's test can catch (tests/starter/test_new_pack_installs.py runs both
fixtures through a generated pack's own tests)."""

from __future__ import annotations

import pytest

from durable_harness import ErrorCode, ToolError
from durable_harness.testing import call_pack_tool
from tests.durable_harness.weather import WEATHER


async def test_refused_arguments_raise_invalid_argument_in_the_workers_words() -> None:
    with pytest.raises(ToolError) as refused:
        await call_pack_tool(WEATHER, "wind_speed", unit="kn")
    assert (refused.value.code, refused.value.message) == (
        ErrorCode.INVALID_ARGUMENT,
        "wind_speed: station: Field required",  # as test_tool_activity's activity says it
    )


async def test_a_tool_the_pack_lacks_raises_unknown_tool() -> None:
    with pytest.raises(ToolError) as refused:
        await call_pack_tool(WEATHER, "wind_gust", station="EHAM")
    assert refused.value.code is ErrorCode.UNKNOWN_TOOL
    assert refused.value.message == "tool 'wind_gust' is not in the weather catalog"
