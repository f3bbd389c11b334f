"""F8: secrets leak into memory episodes, the worker log and MCP servers' stderr."""

from __future__ import annotations

import asyncio
import logging
import sys
import time

import pytest
import structlog

from activities.tool_runner import _tool_failure, redacted_cause
from harness.core.errors import ErrorCode, FailureContext, ToolError
from harness.engine.episodes import episode_of
from harness.engine.run import AttemptRecord, RunPhase
from infra.logs import configure_logging
from tests.factories import START, lit, node, plan, run_result
from tool_servers.config import McpServer
from tool_servers.sessions import McpSessions

GOOGLE_KEY = "AIzaSyD8f3kQ2xVb7Lm9Pq4Rt6Wn1Yc5Ze0Hj_U"
STRIPE_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc9fG2kQx8"


def test_episode_stores_no_google_or_stripe_key() -> None:
    failure = FailureContext(
        node_id="geo",
        tool="geocode",
        arguments={"city": f"Paris&key={GOOGLE_KEY}"},
        code="MISSING_INFO",
        message=f"charge with {STRIPE_KEY} refused; maps key {GOOGLE_KEY} over quota",
    )
    attempt = AttemptRecord(
        attempt=1,
        plan=plan(node("geo", "geocode", lit("city", "Paris"))),
        outcome=RunPhase.FAILED_EXECUTION,
        failure=[failure],
    )
    result = run_result(
        goal=f"Refund with {STRIPE_KEY} and geocode with {GOOGLE_KEY}",
        status=RunPhase.FAILED_EXECUTION,
        attempt_history=[attempt],
    )
    stored = episode_of(result, "default", START).record().model_dump_json()
    assert GOOGLE_KEY not in stored
    assert STRIPE_KEY not in stored
    assert "[redacted]" in stored


def test_worker_log_redacts_a_secret_in_a_tool_failure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    configure_logging()
    structlog.get_logger().info("tool.call", status="FAILED", reason=f"key {GOOGLE_KEY} refused")
    try:
        raise RuntimeError(f"stripe said no to {STRIPE_KEY}")
    except RuntimeError:
        logging.getLogger("temporalio.activity").exception("Completing activity as failed")
    for handler in root.handlers:
        handler.flush()
    logged = capsys.readouterr().err
    assert "tool.call" in logged and "Completing activity as failed" in logged
    assert GOOGLE_KEY not in logged and STRIPE_KEY not in logged
    assert "[redacted]" in logged


def test_a_tool_failure_reaching_history_carries_no_key() -> None:
    error = ToolError(ErrorCode.AUTH_FAILED, f"maps refused key {GOOGLE_KEY}")
    failure = _tool_failure(error.code, error.message, 1)
    cause = redacted_cause(error)
    assert GOOGLE_KEY not in failure.message and GOOGLE_KEY not in str(cause)
    assert "[redacted]" in failure.message and isinstance(cause, ToolError)


async def test_mcp_server_stderr_is_redacted() -> None:
    crash = (
        "import sys; sys.stderr.write("
        f"'Traceback: auth failed for key {GOOGLE_KEY}\\n'); sys.stderr.flush(); sys.exit(1)"
    )
    server = McpServer(name="crashing", command=sys.executable, args=["-c", crash])
    sessions = McpSessions({})
    with structlog.testing.capture_logs() as logs:
        with pytest.raises(ToolError):
            await sessions.list_tools(server)
        await sessions.aclose()
        deadline = time.monotonic() + 60
        while not any(e["event"] == "mcp.stderr" for e in logs) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    lines = [e["line"] for e in logs if e["event"] == "mcp.stderr"]
    assert lines == ["Traceback: auth failed for key [redacted]"]
